-- search_lookup.lua: the postings of a query's terms in one crawl's search index
-- (frontier/search.py). Reads only: one call per crawl instead of one HGET per term and
-- crawl (a search of the latest version of 45 projects: ~45 calls, not ~500).
--
-- KEYS  meta, then the sterm:<h> hashes of the terms
-- ARGV  per term: KEYS index of its hash, the term
--
-- Returns per term its postings, every chunk of them joined ('' for none); {} when the
-- crawl is gone.
local meta = KEYS[1]
local out = {}
if redis.call('EXISTS', meta) == 0 then return out end
for i = 1, #ARGV, 2 do
  local bucket, term = KEYS[tonumber(ARGV[i])], ARGV[i + 1]
  local postings = redis.call('HGET', bucket, term)
  if postings and #postings >= CHUNK_BYTES then
    local parts = {postings}
    for c = 1, MAX_CHUNKS - 1 do
      local more = redis.call('HGET', bucket, term .. '\0' .. string.char(c))
      if not more then break end
      parts[#parts + 1] = more
    end
    postings = table.concat(parts)
  end
  out[#out + 1] = postings or ''
end
return out
