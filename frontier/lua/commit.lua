-- commit.lua: write one page's items and acknowledge its task in one atomic step,
-- fenced by the lease token. Items are deduplicated by key digest + checksum: an item
-- whose checksum is unchanged adds no stream entry.
--
-- KEYS  meta stats task lease tries reaped errors items inflight:<slot> pages svec
--       slnk, then the isum:<b> bucket hashes used by this page's items
-- ARGV  task id, token, page outcome (fetched|not_found|skipped|offsite|unchanged), item
--       count, the page's refresh validators JSON ('' = none: forget any stored),
--       then 6 values per item: KEYS index of its bucket, key digest,
--       checksum12..status letter, item key, status, item JSON,
--       then the page's search index in four values (index_items in _prelude.lua;
--       not written for a crawl with retain_items exported; its vectors only for a
--       crawl whose meta has `vectors`); its KEYS (srec:<r>, slog:<h>) follow the isum
--       buckets; then the page's link log record (common/search/link_log.py: appended
--       to slnk for a crawl whose meta has `links`, when an item of the page was
--       written: a page whose items are all unchanged links to what it did)
--
-- Returns {code, new, updated, unchanged}; code 1 = committed, 0 = fenced (the token is
-- not the current lease holder's), -1 = fenced because the lease deadline has passed.
local meta, stats, task, lease, tries, reaped = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local errors, items, inflight, pages, svec = KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11]
local slnk = KEYS[12]
local id, token, outcome, count, validators = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local FIXED_ARGS = 5

local now = now_ms()
if redis.call('HGET', lease, id) ~= token then
  redis.call('HINCRBY', stats, 'fenced', 1)
  return {0, 0, 0, 0}
end
local deadline = redis.call('ZSCORE', inflight, id)
if not deadline or tonumber(deadline) < now then
  redis.call('HINCRBY', stats, 'fenced', 1)
  return {-1, 0, 0, 0}
end

local new, updated, unchanged, written = write_items(items, stats, id, FIXED_ARGS + 1, count)
-- A crawl that keeps only what is not exported yet (--retain-items exported) gets no
-- search index: its items leave the stream once exported, so the index would point at
-- nothing and hold more than the ~40 B an item such a crawl keeps (docs/search.md).
-- A crawl created before the vector log has none (its meta lacks `vectors`): a log of
-- the items committed since would hold some of its items only (docs/search.md).
local retain, has_vectors, has_links = unpack(redis.call('HMGET', meta, 'retain_items',
                                                        'vectors', 'links'))
local ibase = FIXED_ARGS + 1 + 6 * count
if retain ~= 'exported' then
  index_items(written, FIXED_ARGS + 1, count, ibase, has_vectors == '1' and svec or nil)
  -- A page's first record of no link adds nothing: there is no earlier one to replace.
  local links = ARGV[ibase + 4]
  if has_links == '1' and (updated > 0 or (new > 0 and #links > LINK_HEAD_BYTES)) then
    redis.call('APPEND', slnk, links)
  end
end
if validators ~= '' then
  redis.call('HSET', pages, id, validators)
else
  redis.call('HDEL', pages, id)
end
redis.call('ZREM', inflight, id)
redis.call('HDEL', lease, id)
redis.call('HDEL', tries, id)
redis.call('SREM', reaped, id)
redis.call('HDEL', task, id)
redis.call('HDEL', errors, id)
redis.call('HINCRBY', stats, 'commits', 1)
redis.call('HINCRBY', stats, 'pages_done', 1)
redis.call('HINCRBY', stats, 'pages:' .. outcome, 1)
redis.call('HSET', meta, 'last_commit_at', now)
return {1, new, updated, unchanged}
