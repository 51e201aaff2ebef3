-- reshard.lua: move every queued and delayed task to a new slot count, atomically.
-- In-flight tasks stay where they are; the scripts that requeue them (fail, reap,
-- release) compute their queue under the new slot count, and refuse callers that
-- still use the old one, so nothing is stranded in a slot no consumer serves.
--
-- KEYS[1] meta, then for each slot s = 0..max(old, new)-1: q:<s>, delayed:<s>
-- ARGV[1] current slot count (checked)   ARGV[2] new slot count
--
-- The slot of a task is int(first 8 hex digits of its id, 16) % slots: the same rule
-- as common/sharding.py (a task id is the first 16 hex digits of its fingerprint).
-- Returns {queued moved, delayed moved}, or {-2, 0} when ARGV[1] is stale.
local old = tonumber(ARGV[1])
local new = tonumber(ARGV[2])
if redis.call('HGET', KEYS[1], 'slots') ~= ARGV[1] then
  return {-2, 0}
end
local queued, delayed = {}, {}
for s = 0, old - 1 do
  local q, d = KEYS[2 + 2 * s], KEYS[3 + 2 * s]
  for _, id in ipairs(redis.call('LRANGE', q, 0, -1)) do queued[#queued + 1] = id end
  local scored = redis.call('ZRANGE', d, 0, -1, 'WITHSCORES')
  for i = 1, #scored, 2 do delayed[#delayed + 1] = {scored[i], scored[i + 1]} end
  redis.call('DEL', q, d)
end
local function slot_of(id)
  return tonumber(string.sub(id, 1, 8), 16) % new
end
for _, id in ipairs(queued) do
  redis.call('RPUSH', KEYS[2 + 2 * slot_of(id)], id)
end
for _, pair in ipairs(delayed) do
  redis.call('ZADD', KEYS[3 + 2 * slot_of(pair[1])], pair[2], pair[1])
end
local max_slots = tonumber(redis.call('HGET', KEYS[1], 'max_slots') or old)
if new > max_slots then max_slots = new end
redis.call('HSET', KEYS[1], 'slots', new, 'max_slots', max_slots)
redis.call('HINCRBY', KEYS[1], 'slots_epoch', 1)
return {#queued, #delayed}
