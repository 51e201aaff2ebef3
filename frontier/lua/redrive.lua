-- redrive.lua: put dead-lettered tasks back in their queues with deliveries reset, and
-- reopen the crawl (finished -> running).
--
-- KEYS  meta stats tries reaped errors dlq dlq:why, then the q:<slot> queues
-- ARGV  slot count the caller computed the queues with, count,
--       then per task: task id, KEYS index of its queue
--
-- Returns the number of tasks redriven; STALE error on a stale slot count.
local meta, stats, tries, reaped, errors, dlq, dlq_why =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local slots, count = ARGV[1], tonumber(ARGV[2])
local FIXED_ARGS = 2

local stale = stale_layout(meta, 'slots', slots)
if stale then return stale end
local n = 0
for i = 0, count - 1 do
  local id = ARGV[FIXED_ARGS + 1 + 2 * i]
  if redis.call('ZREM', dlq, id) == 1 then
    redis.call('HDEL', dlq_why, id)
    redis.call('HDEL', tries, id)
    redis.call('HDEL', errors, id)
    redis.call('SREM', reaped, id)
    redis.call('RPUSH', KEYS[tonumber(ARGV[FIXED_ARGS + 2 + 2 * i])], id)
    n = n + 1
  end
end
if n > 0 then
  redis.call('HINCRBY', stats, 'redriven', n)
  if redis.call('HGET', meta, 'state') == 'finished' then
    redis.call('HSET', meta, 'state', 'running')
  end
  redis.call('HDEL', meta, 'finished_at')
end
return n
