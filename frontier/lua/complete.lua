-- complete.lua: completion detection. The crawl is complete when the producer is done
-- and every queue, delayed set and in-flight set of every slot ever used is empty
-- (dead-lettered tasks count as settled). Moves the crawl to `finished` once.
--
-- KEYS  meta, then per slot 0..max_slots-1: q:<slot> delayed:<slot> inflight:<slot>
-- ARGV  max_slots the caller built the key list from
--
-- Returns 1 complete, 0 not complete; STALE error when max_slots changed.
local meta = KEYS[1]
local max_slots = ARGV[1]

local stale = stale_layout(meta, 'max_slots', max_slots)
if stale then return stale end
if redis.call('HGET', meta, 'producer') ~= 'done' then
  return 0
end
for i = 2, #KEYS, 3 do
  if redis.call('LLEN', KEYS[i]) > 0 then return 0 end
  if redis.call('ZCARD', KEYS[i + 1]) > 0 then return 0 end
  if redis.call('ZCARD', KEYS[i + 2]) > 0 then return 0 end
end
if redis.call('HGET', meta, 'state') ~= 'finished' then
  redis.call('HSET', meta, 'state', 'finished', 'finished_at', now_ms())
end
return 1
