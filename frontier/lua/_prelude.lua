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
-- STATUS_OF, GENERATOR_OF  item statuses and page generators by the one-letter code
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
-- index_items(written, base, count, ibase)
--                          the search index (common/search/postings.py) of the items
--                          write_items wrote: from ARGV[ibase], per item its srec KEYS
--                          index, its posting (6 bytes), its term count, then a KEYS
--                          index (slog) and a term tag (4 bytes) per term. Records the
--                          item's stream entry id under its digest; appends tag and
--                          posting to each term's log.
-- new_logs(), log_entry(logs, key, entry), append_logs(logs), log_holds(log, entry),
-- find_entry(log, bytes, from)
--                          the term logs of one script: entries gathered, each log
--                          appended once, entries found on their boundaries
--                          (index_items, search_index.lua, search_lookup.lua use them).
local STATUS_OF = {o = 'ok', a = 'anchor_missing', n = 'page_not_found', s = 'skipped',
                   f = 'offsite', x = 'failed', m = 'ok', M = 'anchor_missing', p = 'ok',
                   P = 'anchor_missing', u = 'ok', U = 'anchor_missing'}
local GENERATOR_OF = {o = 'sphinx', a = 'sphinx', m = 'mkdocstrings', M = 'mkdocstrings',
                      p = 'pydoctor', P = 'pydoctor', u = 'unknown', U = 'unknown'}

-- Adds n to the counters of the status and generator a stored letter stands for.
local function count_letter(delta, letter, n)
  local status = 'status:' .. STATUS_OF[letter]
  delta[status] = (delta[status] or 0) + n
  local generator = GENERATOR_OF[letter]
  if generator then
    delta['generator:' .. generator] = (delta['generator:' .. generator] or 0) + n
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

local function index_items(written, base, count, ibase)
  local at, logs = ibase, new_logs()
  for i = 0, count - 1 do
    local record, posting, terms = KEYS[tonumber(ARGV[at])], ARGV[at + 1], tonumber(ARGV[at + 2])
    local id = written[i]
    if id then
      redis.call('HSET', record, ARGV[base + 6 * i + 1], id)
      for j = 0, terms - 1 do
        log_entry(logs, KEYS[tonumber(ARGV[at + 3 + 2 * j])], ARGV[at + 4 + 2 * j] .. posting)
      end
    end
    at = at + 3 + 2 * terms
  end
  append_logs(logs)
end
