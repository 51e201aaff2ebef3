-- redrive.lua: put dead-lettered tasks back in their queues with deliveries reset.
--
-- KEYS[1] dlq   KEYS[2] dlq:why   KEYS[3] tries   KEYS[4] reaped   KEYS[5] stats
-- KEYS[6] meta  KEYS[7] errors    KEYS[8..] q:<slot> queues
-- ARGV[1] slot count the caller computed queues with
-- ARGV[2] count, then per task: task id, KEYS index of its queue
--
-- Returns the number of tasks redriven, or -2 on a stale slot count.
if redis.call('HGET', KEYS[6], 'slots') ~= ARGV[1] then
  return -2
end
local n = 0
for i = 0, tonumber(ARGV[2]) - 1 do
  local id = ARGV[3 + 2 * i]
  if redis.call('ZREM', KEYS[1], id) == 1 then
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
    redis.call('HDEL', KEYS[7], id)
    redis.call('SREM', KEYS[4], id)
    redis.call('RPUSH', KEYS[tonumber(ARGV[4 + 2 * i])], id)
    n = n + 1
  end
end
if n > 0 then
  redis.call('HINCRBY', KEYS[5], 'redriven', n)
  redis.call('HSET', KEYS[6], 'state', 'running')
  redis.call('HDEL', KEYS[6], 'finished_at')
end
return n
