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
-- STATUS_OF                item statuses by their one-letter code (common.items.
--                          STATUS_LETTER; a test compares the two tables).
-- write_items(items, stats, task_id, base, count)
--                          the dedup rule: append each of `count` items (6 ARGV
--                          values each from ARGV[base]: KEYS index of its isum
--                          bucket, key digest, checksum12..status letter, item key,
--                          status, item JSON) to the stream unless its checksum and
--                          status are unchanged; keeps the per-status counters.
--                          Returns new, updated, unchanged.
local STATUS_OF = {o = 'ok', a = 'anchor_missing', n = 'page_not_found', s = 'skipped',
                   f = 'offsite', x = 'failed'}

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
        local was = STATUS_OF[string.sub(old, -1)]
        delta[was] = (delta[was] or 0) - 1
      else
        new = new + 1
      end
      delta[status] = (delta[status] or 0) + 1
      redis.call('HSET', bucket, field, value)
      redis.call('XADD', items, '*', 'key', key, 'sum', string.sub(value, 1, 12),
                 'kind', kind, 'task', task_id, 'data', data)
    end
  end
  for status, n in pairs(delta) do
    if n ~= 0 then redis.call('HINCRBY', stats, 'status:' .. status, n) end
  end
  if new > 0 then redis.call('HINCRBY', stats, 'items_new', new) end
  if updated > 0 then redis.call('HINCRBY', stats, 'items_updated', updated) end
  if unchanged > 0 then redis.call('HINCRBY', stats, 'items_unchanged', unchanged) end
  return new, updated, unchanged
end
