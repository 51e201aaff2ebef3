-- produced.lua: the producer has enqueued every page of the inventory. Records the
-- figures, marks the producer done and moves the crawl on: producing -> running, and
-- finished -> running when this run added pages (a re-run of a grown inventory).
--
-- KEYS  meta
-- ARGV  tasks added by this run, then field/value pairs to record (entries, pages...)
--
-- Returns the crawl state afterwards.
local meta = KEYS[1]
local added = tonumber(ARGV[1])
local FIXED_ARGS = 1

local unknown = unknown_meta_field(FIXED_ARGS + 1)
if unknown then return unknown end

for i = FIXED_ARGS + 1, #ARGV, 2 do
  redis.call('HSET', meta, ARGV[i], ARGV[i + 1])
end
redis.call('HSET', meta, 'producer', 'done', 'produced_at', now_ms())
local state = redis.call('HGET', meta, 'state')
if state == 'producing' or (added > 0 and state == 'finished') then
  state = 'running'
  redis.call('HSET', meta, 'state', state)
  redis.call('HDEL', meta, 'finished_at')
end
return state
