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
--                          index (sterm hash) and a term per term. Records the item's
--                          stream entry id under its digest; adds its posting to each
--                          term's chunks (at most 10 of 10 postings a term).
-- new_postings(), add_posting(buffer, bucket, term, posting), write_postings(buffer)
--                          the postings of one script, buffered: each term's chunks
--                          read once, each hash written once (index_items uses them).
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

local POSTING_BYTES, CHUNK_BYTES, MAX_CHUNKS = 6, 60, 10

-- A script's postings are written through a buffer of the sterm chunk fields it read
-- (by hash, then field; false: absent) and changed. Each read and each write of a field
-- scans its hash's listpack and each write is propagated to the AOF, so each field is
-- read once a script (items of a page share terms: their module's name tokens) and
-- written once, one HSET per hash at the end (docs/performance.md, "Symbol search",
-- "Cheaper to keep"). Changed fields are written in the order of
-- their first change, so new fields are created in the order one HSET per posting would
-- create them: the hashes end the same, field order included.
local function new_postings()
  return {values = {}, changed = {}, hashes = {}}
end

local function chunk_field(term, c)
  if c == 0 then return term end
  return term .. '\0' .. string.char(c)
end

-- A chunk's postings (false: no such chunk), read once a script.
local function read_chunk(bucket, values, field)
  local postings = values[field]
  if postings == nil then
    postings = redis.call('HGET', bucket, field)
    values[field] = postings
  end
  return postings
end

local function set_chunk(buffer, bucket, field, postings)
  local changed = buffer.changed[bucket]
  if not changed then
    changed = {}
    buffer.changed[bucket] = changed
    buffer.hashes[#buffer.hashes + 1] = bucket
  end
  if not changed[field] then
    changed[field] = true
    changed[#changed + 1] = field
  end
  buffer.values[bucket][field] = postings
end

-- Adds a posting to a term's chunks unless it is there already (a term seen in
-- MAX_CHUNKS full chunks of items takes no more). Chunks fill in order (add_posting is
-- their only writer): a missing or short first chunk means no other, so the last chunk
-- is looked at (is the term full?) only when the first is full.
local function add_posting(buffer, bucket, term, posting)
  local values = buffer.values[bucket]
  if not values then
    values = {}
    buffer.values[bucket] = values
  end
  for c = 0, MAX_CHUNKS - 1 do
    local field = chunk_field(term, c)
    local postings = read_chunk(bucket, values, field)
    if not postings then
      set_chunk(buffer, bucket, field, posting)
      return
    end
    -- there already? (a match must start on a posting's boundary)
    local from = 1
    while true do
      local at = string.find(postings, posting, from, true)
      if not at then break end
      if (at - 1) % POSTING_BYTES == 0 then return end
      from = at + 1
    end
    if #postings < CHUNK_BYTES then
      set_chunk(buffer, bucket, field, postings .. posting)
      return
    end
    if c == 0 then
      local last = read_chunk(bucket, values, chunk_field(term, MAX_CHUNKS - 1))
      if last and #last >= CHUNK_BYTES then return end
    end
  end
end

-- Writes the chunks the buffer changed: one HSET per hash (of at most WRITE_FIELDS
-- fields: unpack's limit is Lua's C stack, a few thousand values).
local WRITE_FIELDS = 1000
local function write_postings(buffer)
  for _, bucket in ipairs(buffer.hashes) do
    local changed, values = buffer.changed[bucket], buffer.values[bucket]
    local args = {}
    for n, field in ipairs(changed) do
      args[#args + 1] = field
      args[#args + 1] = values[field]
      if n % WRITE_FIELDS == 0 or n == #changed then
        redis.call('HSET', bucket, unpack(args))
        args = {}
      end
    end
  end
end

local function index_items(written, base, count, ibase)
  local at, buffer = ibase, new_postings()
  for i = 0, count - 1 do
    local record, posting, terms = KEYS[tonumber(ARGV[at])], ARGV[at + 1], tonumber(ARGV[at + 2])
    local id = written[i]
    if id then
      redis.call('HSET', record, ARGV[base + 6 * i + 1], id)
      for j = 0, terms - 1 do
        add_posting(buffer, KEYS[tonumber(ARGV[at + 3 + 2 * j])], ARGV[at + 4 + 2 * j], posting)
      end
    end
    at = at + 3 + 2 * terms
  end
  write_postings(buffer)
end
