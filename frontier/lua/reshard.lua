-- reshard.lua: move every queued and delayed task to a new slot count, atomically.
-- In-flight tasks stay where they are; the scripts that requeue them (fail, reap,
-- release) compute their queue under the new slot count, and refuse callers that
-- still use the old one, so nothing is stranded in a slot no consumer serves.
--
-- KEYS  meta, then per slot s = 0..max(old, new)-1: q:<s> delayed:<s>
-- ARGV  current slot count (checked), new slot count
--
-- The slot of a task is int(first 8 hex digits of its id, 16) % slots: the same rule
-- as common/sharding.py (a task id is the first 16 hex digits of its fingerprint).
-- Returns {queued moved, delayed moved}; STALE error when the current count is stale.
local meta = KEYS[1]
local old_slots, new_slots = ARGV[1], tonumber(ARGV[2])
local FIXED_KEYS = 1

local stale = stale_layout(meta, 'slots', old_slots)
if stale then return stale end
local old = tonumber(old_slots)
local function queue_of(slot) return KEYS[FIXED_KEYS + 1 + 2 * slot] end
local function delayed_of(slot) return KEYS[FIXED_KEYS + 2 + 2 * slot] end
local function slot_of(id) return tonumber(string.sub(id, 1, 8), 16) % new_slots end

local queued, delayed = {}, {}
for s = 0, old - 1 do
  for _, id in ipairs(redis.call('LRANGE', queue_of(s), 0, -1)) do queued[#queued + 1] = id end
  local scored = redis.call('ZRANGE', delayed_of(s), 0, -1, 'WITHSCORES')
  for i = 1, #scored, 2 do delayed[#delayed + 1] = {scored[i], scored[i + 1]} end
  redis.call('DEL', queue_of(s), delayed_of(s))
end
for _, id in ipairs(queued) do
  redis.call('RPUSH', queue_of(slot_of(id)), id)
end
for _, pair in ipairs(delayed) do
  redis.call('ZADD', delayed_of(slot_of(pair[1])), pair[2], pair[1])
end
local max_slots = tonumber(redis.call('HGET', meta, 'max_slots') or old)
if new_slots > max_slots then max_slots = new_slots end
redis.call('HSET', meta, 'slots', new_slots, 'max_slots', max_slots)
redis.call('HINCRBY', meta, 'slots_epoch', 1)
return {#queued, #delayed}
