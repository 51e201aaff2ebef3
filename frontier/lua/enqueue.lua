-- enqueue.lua: add page tasks, idempotently. A task id ever enqueued (committed, dead
-- or queued) is never enqueued again, so running the producer twice adds nothing.
--
-- KEYS  meta stats task seen, then the q:<slot> queues used by this batch
-- ARGV  slot count the caller computed the queues with, task count,
--       then per task: task id, payload JSON, KEYS index of its queue
--
-- Returns the number of tasks added; STALE error on a stale slot count.
local meta, stats, task, seen = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local slots, count = ARGV[1], tonumber(ARGV[2])
local FIXED_ARGS = 2

local stale = stale_layout(meta, 'slots', slots)
if stale then return stale end
local added = 0
for i = 0, count - 1 do
  local base = FIXED_ARGS + 1 + 3 * i
  local id = ARGV[base]
  if redis.call('SADD', seen, id) == 1 then
    redis.call('HSET', task, id, ARGV[base + 1])
    redis.call('RPUSH', KEYS[tonumber(ARGV[base + 2])], id)
    added = added + 1
  end
end
if added > 0 then
  redis.call('HINCRBY', stats, 'enqueued', added)
end
return added
