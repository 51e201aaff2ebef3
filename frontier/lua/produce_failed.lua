-- produce_failed.lua: the producer could not read the inventory (HTTP 404, not an
-- inventory, unreachable site) or could not enqueue. Records the error where status and
-- the crawl supervisor read it. A crawl that has nothing enqueued yet (new, or still
-- producing) becomes `failed`; a running or finished crawl keeps its state and its
-- tasks (a failed re-run must not undo a crawl).
--
-- KEYS  meta
-- ARGV  error line, then field/value pairs to record (site, inventory_url)
--
-- Returns the crawl state afterwards.
local meta = KEYS[1]
local error_line = ARGV[1]
local FIXED_ARGS = 1

local unknown = unknown_meta_field(FIXED_ARGS + 1)
if unknown then return unknown end

local now = now_ms()
for i = FIXED_ARGS + 1, #ARGV, 2 do
  redis.call('HSETNX', meta, ARGV[i], ARGV[i + 1])
end
redis.call('HSET', meta, 'producer', 'failed', 'error', error_line, 'failed_at', now)
redis.call('HSETNX', meta, 'created_at', now)
local state = redis.call('HGET', meta, 'state')
if not state or state == 'producing' then
  state = 'failed'
  redis.call('HSET', meta, 'state', state)
end
return state
