-- reap.lua: return expired leases of one slot to a queue, or dead-letter them when the
-- task has used its deliveries. Idempotent: a task already reaped, committed or renewed
-- is skipped. The caller lists candidate ids (from ZRANGEBYSCORE) and their target
-- queues; this script re-checks each one.
--
-- KEYS  meta stats lease tries reaped errors dlq dlq:why inflight:<slot>,
--       then the target queues q:<slot>
-- ARGV  max deliveries, slot count the caller computed the targets with, count,
--       then per task: task id, KEYS index of its target queue
--
-- Returns {requeued, dead}; STALE error on a stale slot count.
local meta, stats, lease, tries, reaped = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local errors, dlq, dlq_why, inflight = KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local max, slots, count = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local FIXED_ARGS = 3

local stale = stale_layout(meta, 'slots', slots)
if stale then return stale end
local now = now_ms()
local requeued, dead = 0, 0
for i = 0, count - 1 do
  local id = ARGV[FIXED_ARGS + 1 + 2 * i]
  local queue = KEYS[tonumber(ARGV[FIXED_ARGS + 2 + 2 * i])]
  local deadline = redis.call('ZSCORE', inflight, id)
  if deadline and tonumber(deadline) < now then
    redis.call('ZREM', inflight, id)
    redis.call('HDEL', lease, id)
    local deliveries = tonumber(redis.call('HGET', tries, id) or '0')
    if deliveries >= max then
      local last = redis.call('HGET', errors, id)
      local why = {reason = 'lease expired', tries = deliveries, at = now}
      if last then why.error = cjson.decode(last).error end
      redis.call('ZADD', dlq, now, id)
      redis.call('HSET', dlq_why, id, cjson.encode(why))
      redis.call('SREM', reaped, id)
      redis.call('HINCRBY', stats, 'dead', 1)
      dead = dead + 1
    else
      redis.call('RPUSH', queue, id)
      redis.call('SADD', reaped, id)
      requeued = requeued + 1
    end
  end
end
if requeued + dead > 0 then
  redis.call('HINCRBY', stats, 'reaped', requeued + dead)
end
return {requeued, dead}
