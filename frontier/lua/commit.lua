-- commit.lua: write one page's items and acknowledge its task in one atomic step,
-- fenced by the lease token. Items are deduplicated by key digest + checksum: an item
-- whose checksum is unchanged adds no stream entry.
--
-- KEYS  meta stats task lease tries reaped errors items inflight:<slot> pages,
--       then the isum:<b> bucket hashes used by this page's items
-- ARGV  task id, token, page outcome (fetched|not_found|skipped|offsite|unchanged), item
--       count, the page's refresh validators JSON ('' = none: forget any stored),
--       then 6 values per item: KEYS index of its bucket, key digest,
--       checksum12..status letter, item key, status, item JSON
--
-- Returns {code, new, updated, unchanged}; code 1 = committed, 0 = fenced (the token is
-- not the current lease holder's), -1 = fenced because the lease deadline has passed.
local meta, stats, task, lease, tries, reaped = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local errors, items, inflight, pages = KEYS[7], KEYS[8], KEYS[9], KEYS[10]
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

-- Item statuses by their one-letter code (common.items.ItemStatus; a test compares them).
local status_of = {o = 'ok', a = 'anchor_missing', n = 'page_not_found', s = 'skipped',
                   f = 'offsite'}
local new, updated, unchanged = 0, 0, 0
-- Status counter changes are summed here and written once per status after the loop:
-- one HINCRBY per item would be ~30 per page (and, replicated by effects, as many AOF records).
local delta = {}
for i = 0, count - 1 do
  local base = FIXED_ARGS + 1 + 6 * i
  local bucket = KEYS[tonumber(ARGV[base])]
  local field, value, key = ARGV[base + 1], ARGV[base + 2], ARGV[base + 3]
  local status, data = ARGV[base + 4], ARGV[base + 5]
  local old = redis.call('HGET', bucket, field)
  if old == value then
    unchanged = unchanged + 1
  else
    local kind = 'new'
    if old then
      kind = 'update'
      updated = updated + 1
      local was = status_of[string.sub(old, -1)]
      delta[was] = (delta[was] or 0) - 1
    else
      new = new + 1
    end
    delta[status] = (delta[status] or 0) + 1
    redis.call('HSET', bucket, field, value)
    redis.call('XADD', items, '*', 'key', key, 'sum', string.sub(value, 1, 12),
               'kind', kind, 'task', id, 'data', data)
  end
end

for status, n in pairs(delta) do
  if n ~= 0 then redis.call('HINCRBY', stats, 'status:' .. status, n) end
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
if new > 0 then redis.call('HINCRBY', stats, 'items_new', new) end
if updated > 0 then redis.call('HINCRBY', stats, 'items_updated', updated) end
if unchanged > 0 then redis.call('HINCRBY', stats, 'items_unchanged', unchanged) end
redis.call('HSET', meta, 'last_commit_at', now)
return {1, new, updated, unchanged}
