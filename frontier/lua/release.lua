-- release.lua: hand a claimed task back untouched (graceful stop). The delivery does not
-- count against the task's limit and it goes to the head of its queue.
--
-- KEYS  meta stats lease tries inflight:<slot> queue
--       (queue: q:<slot of the task under the current slot count>)
-- ARGV  task id, token, slot count the caller computed the queue with
--
-- Returns 1 released, 0 fenced; STALE error on a stale slot count.
local meta, stats, lease, tries, inflight, queue = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local id, token, slots = ARGV[1], ARGV[2], ARGV[3]

if redis.call('HGET', lease, id) ~= token then
  return 0
end
local stale = stale_layout(meta, 'slots', slots)
if stale then return stale end
redis.call('ZREM', inflight, id)
redis.call('HDEL', lease, id)
if redis.call('HINCRBY', tries, id, -1) <= 0 then
  redis.call('HDEL', tries, id)
end
redis.call('LPUSH', queue, id)
redis.call('HINCRBY', stats, 'released', 1)
return 1
