-- release.lua: hand a claimed task back untouched: at the head of its queue (graceful
-- stop), or into its delayed set until a time (postponed: its host is blocked or busy
-- for a while). The delivery does not count against the task's limit either way.
--
-- KEYS  meta stats lease tries inflight:<slot> queue delayed
--       (queue, delayed: q:<s> and delayed:<s> of the task's slot under the current
--       slot count)
-- ARGV  task id, token, slot count the caller computed the queue with,
--       not-before delay ms (0: back to the head of the queue now)
--
-- Returns 1 released, 0 fenced; STALE error on a stale slot count.
local meta, stats, lease, tries, inflight, queue, delayed =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local id, token, slots, delay_ms = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

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
if delay_ms > 0 then
  redis.call('ZADD', delayed, now_ms() + delay_ms, id)
  redis.call('HINCRBY', stats, 'postponed', 1)
else
  redis.call('LPUSH', queue, id)
  redis.call('HINCRBY', stats, 'released', 1)
end
return 1
