-- search_index.lua: index items already in the stream (a crawl committed before the
-- search index existed: `invcrawl search --reindex`). For each item, its record (the
-- stream entry id of its latest item) and its postings, as commit.lua writes them
-- (add_posting in _prelude.lua: a posting already there is not added twice).
--
-- KEYS  meta, then the srec:<r> and sterm:<h> hashes of this batch
-- ARGV  per item: KEYS index of its srec hash, its digest (isum field), its stream
--       entry id, its posting (6 bytes), its term count, then a KEYS index (sterm hash)
--       and a term per term
--
-- Returns the number of items indexed (0: the crawl is gone, e.g. forgotten meanwhile:
-- nothing is written).
local meta = KEYS[1]
if redis.call('EXISTS', meta) == 0 then return 0 end
local at, indexed, buffer = 1, 0, new_postings()
while at <= #ARGV do
  local record, field, id = KEYS[tonumber(ARGV[at])], ARGV[at + 1], ARGV[at + 2]
  local posting, terms = ARGV[at + 3], tonumber(ARGV[at + 4])
  redis.call('HSET', record, field, id)
  for j = 0, terms - 1 do
    add_posting(buffer, KEYS[tonumber(ARGV[at + 5 + 2 * j])], ARGV[at + 6 + 2 * j], posting)
  end
  indexed = indexed + 1
  at = at + 5 + 2 * terms
end
write_postings(buffer)
return indexed
