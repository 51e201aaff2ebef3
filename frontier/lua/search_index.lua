-- search_index.lua: index items already in the stream (a crawl committed before the
-- search index existed, or under its first layout: `invcrawl search --reindex`). For
-- each item, its record (the stream entry id of its latest item) and its term log
-- entries, as commit.lua writes them, but an entry a log holds already is not appended
-- again (run twice, it adds nothing). And the vector log's records (the caller leaves
-- out those the log holds already), the meta marked `vectors` so that commit.lua appends
-- to the log from then on; the same for the link log's records (`links`), given with
-- the last batch.
--
-- KEYS  meta svec slnk, then the srec:<r> hashes and slog:<h> strings of this batch
-- ARGV  whether to write vectors (1/0: no model), the vector records (joined), whether
--       to write link records (1/0: not in this batch), the link records, then per
--       item: KEYS index of its srec hash, its digest (isum field), its stream
--       entry id, its posting (6 bytes), its term count, then a KEYS index (slog) and a
--       term tag (4 bytes) per term
--
-- Returns the number of items indexed (0: the crawl is gone, e.g. forgotten meanwhile:
-- nothing is written).
local meta, svec, slnk = KEYS[1], KEYS[2], KEYS[3]
local write_vectors, records = ARGV[1] == '1', ARGV[2]
local write_links, link_records = ARGV[3] == '1', ARGV[4]
local FIXED_ARGS = 4
if redis.call('EXISTS', meta) == 0 then return 0 end
if write_vectors then
  redis.call('HSET', meta, 'vectors', '1')
  if records ~= '' then redis.call('APPEND', svec, records) end
end
if write_links then
  redis.call('HSET', meta, 'links', '1')
  if link_records ~= '' then redis.call('APPEND', slnk, link_records) end
end
local at, indexed, logs = FIXED_ARGS + 1, 0, new_logs()
local held, added = {}, {}  -- each log as read once; the entries this call adds
while at <= #ARGV do
  local record, field, id = KEYS[tonumber(ARGV[at])], ARGV[at + 1], ARGV[at + 2]
  local posting, terms = ARGV[at + 3], tonumber(ARGV[at + 4])
  redis.call('HSET', record, field, id)
  for j = 0, terms - 1 do
    local key, entry = KEYS[tonumber(ARGV[at + 5 + 2 * j])], ARGV[at + 6 + 2 * j] .. posting
    if held[key] == nil then
      held[key], added[key] = redis.call('GET', key) or '', {}
    end
    if not added[key][entry] and not log_holds(held[key], entry) then
      added[key][entry] = true
      log_entry(logs, key, entry)
    end
  end
  indexed = indexed + 1
  at = at + 5 + 2 * terms
end
append_logs(logs)
return indexed
