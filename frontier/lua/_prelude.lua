-- _prelude.lua: prepended to every script of this folder by frontier/scripts.py.
--
-- now_ms()                 Redis server time in milliseconds (every deadline and
--                          timestamp of invcrawl is server time: clocks of consumers
--                          never matter).
-- stale_layout(meta, field, value)
--                          the STALE error reply when the caller built its slot keys
--                          under another layout (`slots` or `max_slots` of the
--                          crawl's meta), else nil. Scripts return it before they
--                          write anything; the runner turns it into
--                          frontier.scripts.StaleLayout (refresh the layout, call
--                          again).
-- META_FIELDS              the field names of a crawl's meta hash, a set generated from
--                          frontier/meta.py (frontier/scripts.py puts it before this
--                          file).
-- unknown_meta_field(base) the error reply for the first name of the field/value pairs
--                          at ARGV[base..] that is no field of the meta, else nil: the
--                          scripts writing fields their caller names return it before
--                          they write anything.
-- STATUS_COUNTER, GENERATOR_COUNTER
--                          the stats counters (status:<s>, generator:<g>) of the
--                          item statuses and page generators by the one-letter code
--                          stored after the checksum (common.items.LETTERS; a test
--                          compares the tables): an item of a page that was read
--                          has its generator's letter, a Sphinx one its status's.
-- write_items(items, stats, task_id, base, count)
--                          the dedup rule: append each of `count` items (6 ARGV
--                          values each from ARGV[base]: KEYS index of its isum
--                          bucket, key digest, checksum12..status letter, item key,
--                          status, item JSON) to the stream unless its checksum and
--                          status are unchanged; keeps the per-status and
--                          per-generator counters (stats status:<s>, generator:<g>).
--                          Returns new, updated, unchanged, and the stream entry id of
--                          each item written (by its 0-based index; nil: unchanged).
-- index_items(written, base, count, ibase, vectors)
--                          the search index (common/search/postings.py) of the items
--                          write_items wrote, from four ARGV at ibase: the srec KEYS
--                          index of each item (a JSON array), the page's term logs (a
--                          JSON array of pairs: a slog KEYS index, its entry count)
--                          and their entries (a term's tag and an item's posting, 10
--                          bytes each), joined in that order, then the items' vector
--                          log records (common/search/vector_log.py, 134 bytes each).
--                          Records each item's stream entry id under its digest;
--                          appends each log's entries with one APPEND, and the records
--                          to `vectors` (the svec key; nil: none) with one more, those
--                          of unchanged items left out.
-- new_logs(), log_entry(logs, key, entry), append_logs(logs), log_holds(log, entry),
-- find_entry(log, bytes, from)
--                          the term logs of one script: entries gathered, each log
--                          appended once, entries found on their boundaries
--                          (search_index.lua and search_lookup.lua use them).
local function unknown_meta_field(base)
  for i = base, #ARGV, 2 do
    if not META_FIELDS[ARGV[i]] then
      return redis.error_reply('META ' .. ARGV[i] .. ' is no field of a crawl\'s meta')
    end
  end
  return nil
end

local STATUS_COUNTER = {o = 'status:ok', a = 'status:anchor_missing',
                        n = 'status:page_not_found', s = 'status:skipped',
                        f = 'status:offsite', x = 'status:failed', m = 'status:ok',
                        M = 'status:anchor_missing', p = 'status:ok',
                        P = 'status:anchor_missing', u = 'status:ok',
                        U = 'status:anchor_missing'}
local GENERATOR_COUNTER = {o = 'generator:sphinx', a = 'generator:sphinx',
                           m = 'generator:mkdocstrings', M = 'generator:mkdocstrings',
                           p = 'generator:pydoctor', P = 'generator:pydoctor',
                           u = 'generator:unknown', U = 'generator:unknown'}

-- Adds n to the counters of the status and generator a stored letter stands for.
local function count_letter(delta, letter, n)
  local status = STATUS_COUNTER[letter]
  delta[status] = (delta[status] or 0) + n
  local generator = GENERATOR_COUNTER[letter]
  if generator then
    delta[generator] = (delta[generator] or 0) + n
  end
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function stale_layout(meta, field, value)
  if redis.call('HGET', meta, field) ~= value then
    return redis.error_reply('STALE slot layout changed (the crawl was resharded)')
  end
end

local function write_items(items, stats, task_id, base, count)
  local new, updated, unchanged = 0, 0, 0
  local written = {}
  -- Status counter changes are summed here and written once per status after the loop:
  -- one HINCRBY per item would be ~30 per page (and, replicated by effects, as many AOF
  -- records).
  local delta = {}
  for i = 0, count - 1 do
    local at = base + 6 * i
    local bucket = KEYS[tonumber(ARGV[at])]
    local field, value, key = ARGV[at + 1], ARGV[at + 2], ARGV[at + 3]
    local status, data = ARGV[at + 4], ARGV[at + 5]
    local old = redis.call('HGET', bucket, field)
    if old == value then
      unchanged = unchanged + 1
    else
      local kind = 'new'
      if old then
        kind = 'update'
        updated = updated + 1
        count_letter(delta, string.sub(old, -1), -1)
      else
        new = new + 1
      end
      count_letter(delta, string.sub(value, -1), 1)
      redis.call('HSET', bucket, field, value)
      written[i] = redis.call('XADD', items, '*', 'key', key, 'sum', string.sub(value, 1, 12),
                              'kind', kind, 'task', task_id, 'data', data)
    end
  end
  for counter, n in pairs(delta) do
    if n ~= 0 then redis.call('HINCRBY', stats, counter, n) end
  end
  if new > 0 then redis.call('HINCRBY', stats, 'items_new', new) end
  if updated > 0 then redis.call('HINCRBY', stats, 'items_updated', updated) end
  if unchanged > 0 then redis.call('HINCRBY', stats, 'items_unchanged', unchanged) end
  return new, updated, unchanged, written
end

local TAG_BYTES, ENTRY_BYTES, MAX_POSTINGS = 4, 10, 100
local POSTING_BYTES, RECORD_BYTES = 6, 134  -- a vector log record: digest + 128 int8
local LINK_HEAD_BYTES = 8  -- a link log record's page digest and count (link_log.py)

-- The term logs of a script (common/search/postings.py): each log's entries (a term's
-- tag and an item's posting), gathered in the order logs are first touched and
-- appended with one APPEND each at the end: no read and no scan of what a log holds.
local function new_logs()
  return {entries = {}, order = {}}
end

local function log_entry(logs, key, entry)
  local entries = logs.entries[key]
  if not entries then
    entries = {}
    logs.entries[key] = entries
    logs.order[#logs.order + 1] = key
  end
  entries[#entries + 1] = entry
end

local function append_logs(logs)
  for _, key in ipairs(logs.order) do
    redis.call('APPEND', key, table.concat(logs.entries[key]))
  end
end

-- The first place from `from` on where `bytes` start a log entry (an entry's boundary:
-- not bytes inside two), or nil.
local function find_entry(log, bytes, from)
  while true do
    local at = string.find(log, bytes, from, true)
    if not at or (at - 1) % ENTRY_BYTES == 0 then return at end
    from = at + 1
  end
end

-- Whether a log holds an entry.
local function log_holds(log, entry)
  return find_entry(log, entry, 1) ~= nil
end

-- The posting of an item (6 bytes) from its digest (12 hex).
local function posting_of(field)
  return (string.gsub(field, '..', function(hex) return string.char(tonumber(hex, 16)) end))
end

-- The entries of `part` (a run of log entries) whose posting is one of `keep`.
local function kept_entries(part, keep)
  local out = {}
  for at = 1, #part, ENTRY_BYTES do
    if keep[string.sub(part, at + TAG_BYTES, at + ENTRY_BYTES - 1)] then
      out[#out + 1] = string.sub(part, at, at + ENTRY_BYTES - 1)
    end
  end
  return table.concat(out)
end

-- The vector records of `part` (a run of them) whose item's posting is one of `keep`.
local function kept_records(part, keep)
  local out = {}
  for at = 1, #part, RECORD_BYTES do
    if keep[string.sub(part, at, at + POSTING_BYTES - 1)] then
      out[#out + 1] = string.sub(part, at, at + RECORD_BYTES - 1)
    end
  end
  return table.concat(out)
end

-- The page's entries come grouped by log from the consumer (frontier/delivery.py,
-- search_index_args): three ARGV whatever the page's size, and one APPEND per log,
-- with no Lua work per term unless an item of the page was unchanged.
local function index_items(written, base, count, ibase, vectors)
  local records, directory, entries = cjson.decode(ARGV[ibase]), cjson.decode(ARGV[ibase + 1]), ARGV[ibase + 2]
  local keep
  for i = 0, count - 1 do
    local field, id = ARGV[base + 6 * i + 1], written[i]
    if id then
      redis.call('HSET', KEYS[records[i + 1]], field, id)
    else
      keep = keep or {}
    end
  end
  if keep then  -- some items unchanged: only the written ones' entries
    for i = 0, count - 1 do
      if written[i] then keep[posting_of(ARGV[base + 6 * i + 1])] = true end
    end
  end
  local from = 1
  for j = 1, #directory, 2 do
    local to = from + directory[j + 1] * ENTRY_BYTES
    local part = string.sub(entries, from, to - 1)
    if keep then part = kept_entries(part, keep) end
    if part ~= '' then redis.call('APPEND', KEYS[directory[j]], part) end
    from = to
  end
  if vectors then
    local part = ARGV[ibase + 3]
    if keep then part = kept_records(part, keep) end
    if part ~= '' then redis.call('APPEND', vectors, part) end
  end
end
