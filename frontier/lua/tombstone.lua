-- tombstone.lua: a refresh found item keys (and pages) gone from the inventory. Each
-- removed key that still has an item gets exactly one tombstone in the item stream
-- (kind `removed`) and leaves the dedup hash, so its status counter drops and a later
-- return counts as new; a key already removed is skipped, so a resumed refresh adds no
-- second tombstone. Pages gone from the inventory lose their validators. A crawl with a
-- vector log (svec) gets a removed record there for each tombstone: the searches'
-- candidates by meaning drop the item (a crawl with none is given none); one with a link
-- log (slnk) a record of no link for each page gone (common/search/link_log.py).
--
-- KEYS  stats items pages svec slnk, then the isum:<b> bucket hashes used by this batch
-- ARGV  page count, page ids..., then 4 values per key: KEYS index of its bucket,
--       key digest, item key, KEYS index of its search record hash (srec:<r>: the
--       record goes, so the search finds it no more; its postings, left behind, lead
--       nowhere)
--
-- Returns the number of tombstones written.
local stats, items, pages, svec, slnk = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local page_count = tonumber(ARGV[1])
local FIXED_ARGS = 1

local has_links = redis.call('EXISTS', slnk) == 1
local unlinked = {}
for i = FIXED_ARGS + 1, FIXED_ARGS + page_count do
  redis.call('HDEL', pages, ARGV[i])
  if has_links then  -- its digest: the id's first 12 hex, then a count of 0
    unlinked[#unlinked + 1] = posting_of(string.sub(ARGV[i], 1, 12)) .. '\0\0'
  end
end
if #unlinked > 0 then redis.call('APPEND', slnk, table.concat(unlinked)) end
local removed = 0
local delta = {}
local gone = {}  -- the vector log's removed records (128 zero bytes after the digest)
local has_vectors = redis.call('EXISTS', svec) == 1
for base = FIXED_ARGS + page_count + 1, #ARGV, 4 do
  local bucket = KEYS[tonumber(ARGV[base])]
  local field, key = ARGV[base + 1], ARGV[base + 2]
  local old = redis.call('HGET', bucket, field)
  if old then
    count_letter(delta, string.sub(old, -1), -1)
    redis.call('HDEL', bucket, field)
    redis.call('HDEL', KEYS[tonumber(ARGV[base + 3])], field)
    redis.call('XADD', items, '*', 'key', key, 'sum', '', 'kind', 'removed', 'task', '',
               'data', cjson.encode({key = key, status = 'removed'}))
    removed = removed + 1
    if has_vectors then
      gone[#gone + 1] = posting_of(field) .. string.rep('\0', RECORD_BYTES - POSTING_BYTES)
    end
  end
end
if #gone > 0 then redis.call('APPEND', svec, table.concat(gone)) end
for counter, n in pairs(delta) do
  redis.call('HINCRBY', stats, counter, n)
end
if removed > 0 then redis.call('HINCRBY', stats, 'items_removed', removed) end
return removed
