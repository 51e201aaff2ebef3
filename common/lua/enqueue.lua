-- enqueue.lua: add page tasks, idempotently. A task id ever enqueued (committed, dead
-- or queued) is never enqueued again, so running the producer twice adds nothing.
--
-- KEYS[1] seen   KEYS[2] task   KEYS[3] stats   KEYS[4] meta
-- KEYS[5..] q:<slot> queues used by this batch
-- ARGV[1] slot count the caller computed the queues with
-- ARGV[2] count, then per task: task id, payload JSON, KEYS index of its queue
--
-- Returns the number of tasks added, or -2 on a stale slot count.
if redis.call('HGET', KEYS[4], 'slots') ~= ARGV[1] then
  return -2
end
local added = 0
for i = 0, tonumber(ARGV[2]) - 1 do
  local id = ARGV[3 + 3 * i]
  if redis.call('SADD', KEYS[1], id) == 1 then
    redis.call('HSET', KEYS[2], id, ARGV[4 + 3 * i])
    redis.call('RPUSH', KEYS[tonumber(ARGV[5 + 3 * i])], id)
    added = added + 1
  end
end
if added > 0 then
  redis.call('HINCRBY', KEYS[3], 'enqueued', added)
end
return added
