-- complete.lua: completion detection. The crawl is complete when the producer is done
-- and every queue, delayed set and in-flight set of every slot ever used is empty
-- (dead-lettered tasks count as settled). Moves the crawl to `finished` once, unless
-- asked only whether it is complete: a consumer asks that first, and writes the items of
-- dead pages before the call that finishes the crawl (consumer/crawls.py).
--
-- KEYS  meta, then per slot 0..max_slots-1: q:<slot> delayed:<slot> inflight:<slot>
-- ARGV  max_slots the caller built the key list from, finish ('0': only say; else, and
--       when absent, move a complete crawl to `finished`)
--
-- Returns 1 complete, 0 not complete, -1 not complete and in state `failed` (nothing
-- will complete it); STALE error when max_slots changed.
local meta = KEYS[1]
local max_slots, finish = ARGV[1], ARGV[2] ~= '0'

local function not_complete()
  if redis.call('HGET', meta, 'state') == 'failed' then return -1 end
  return 0
end

local stale = stale_layout(meta, 'max_slots', max_slots)
if stale then return stale end
if redis.call('HGET', meta, 'producer') ~= 'done' then
  return not_complete()
end
for i = 2, #KEYS, 3 do
  if redis.call('LLEN', KEYS[i]) > 0 then return not_complete() end
  if redis.call('ZCARD', KEYS[i + 1]) > 0 then return not_complete() end
  if redis.call('ZCARD', KEYS[i + 2]) > 0 then return not_complete() end
end
if finish and redis.call('HGET', meta, 'state') ~= 'finished' then
  redis.call('HSET', meta, 'state', 'finished', 'finished_at', now_ms())
end
return 1
