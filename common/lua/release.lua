-- release.lua: hand a claimed task back untouched (graceful stop). The delivery does not
-- count against the task's limit and it goes to the head of its queue.
--
-- KEYS[1] lease   KEYS[2] tries   KEYS[3] stats   KEYS[4] meta   KEYS[5] inflight:<slot>
-- KEYS[6] q:<slot of the task under the current slot count>
-- ARGV[1] task id   ARGV[2] token   ARGV[3] slot count the caller computed KEYS[6] with
--
-- Returns 1 released, 0 fenced, -2 stale slot count.
local id, token = ARGV[1], ARGV[2]
if redis.call('HGET', KEYS[1], id) ~= token then
  return 0
end
if redis.call('HGET', KEYS[4], 'slots') ~= ARGV[3] then
  return -2
end
redis.call('ZREM', KEYS[5], id)
redis.call('HDEL', KEYS[1], id)
if redis.call('HINCRBY', KEYS[2], id, -1) <= 0 then
  redis.call('HDEL', KEYS[2], id)
end
redis.call('LPUSH', KEYS[6], id)
redis.call('HINCRBY', KEYS[3], 'released', 1)
return 1
