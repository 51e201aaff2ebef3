-- search_lookup.lua: the postings of a query's terms in one crawl's search index
-- (frontier/search.py). Reads only: one call per crawl instead of one GET per term and
-- crawl (a search of the latest version of 45 projects: ~45 calls, not ~500).
--
-- KEYS  meta, then the slog:<h> term logs of the terms
-- ARGV  per term: KEYS index of its log, its tag (4 bytes)
--
-- Returns per term its postings, joined ('' for none): each item once, the first
-- MAX_POSTINGS (postings_in in common/search/postings.py does the same); {} when the
-- crawl is gone.
local meta = KEYS[1]
local out = {}
if redis.call('EXISTS', meta) == 0 then return out end
local logs = {}  -- each log read once a call
for i = 1, #ARGV, 2 do
  local key, tag = KEYS[tonumber(ARGV[i])], ARGV[i + 1]
  local log = logs[key]
  if log == nil then
    log = redis.call('GET', key) or ''
    logs[key] = log
  end
  local found, seen, at = {}, {}, find_entry(log, tag, 1)
  while at and #found < MAX_POSTINGS do
    local posting = string.sub(log, at + TAG_BYTES, at + ENTRY_BYTES - 1)
    if not seen[posting] then
      seen[posting] = true
      found[#found + 1] = posting
    end
    at = find_entry(log, tag, at + ENTRY_BYTES)
  end
  out[#out + 1] = table.concat(found)
end
return out
