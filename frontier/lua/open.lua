-- open.lua: the producer opens a crawl: create its metadata, or reopen it keeping its
-- slot layout and dedup buckets. A crawl whose earlier production failed goes back to
-- `producing`; a running or finished one keeps its state until produced.lua (a re-run
-- that adds no page must not reopen a finished crawl).
--
-- KEYS  meta
-- ARGV  slot count, dedup buckets, search term logs, then field/value pairs to record
--       (site, project...)
--
-- Returns {slots, max_slots, buckets, term_logs} as stored (term_logs false: a crawl
-- created before it was recorded, whose index keeps its first layout).
local meta = KEYS[1]
local slots, buckets, term_logs = ARGV[1], ARGV[2], ARGV[3]
local FIXED_ARGS = 3

local unknown = unknown_meta_field(FIXED_ARGS + 1)
if unknown then return unknown end

redis.call('HSETNX', meta, 'slots', slots)
redis.call('HSETNX', meta, 'max_slots', slots)
-- The term logs are fixed with the buckets, at creation only: a crawl reopened without
-- them keeps the layout its index was written under (common/search/postings.py). So are
-- its vector and link logs: written from its first commit, so they hold every item and
-- page (a crawl created before them has none until `search --reindex` writes them).
if redis.call('HSETNX', meta, 'buckets', buckets) == 1 then
  redis.call('HSET', meta, 'term_logs', term_logs, 'vectors', '1', 'links', '1')
end
redis.call('HSETNX', meta, 'created_at', now_ms())
local state = redis.call('HGET', meta, 'state')
if not state or state == 'failed' then
  redis.call('HSET', meta, 'state', 'producing')
end
for i = FIXED_ARGS + 1, #ARGV, 2 do
  redis.call('HSET', meta, ARGV[i], ARGV[i + 1])
end
redis.call('HSET', meta, 'producer', 'running')
redis.call('HDEL', meta, 'error')
return redis.call('HMGET', meta, 'slots', 'max_slots', 'buckets', 'term_logs')
