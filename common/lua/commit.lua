-- commit.lua: write one page's items and acknowledge its task in one atomic step,
-- fenced by the lease token. Items are deduplicated by key digest + checksum: an item
-- whose checksum is unchanged adds no stream entry.
--
-- KEYS[1] lease   KEYS[2] tries   KEYS[3] reaped   KEYS[4] task   KEYS[5] stats
-- KEYS[6] items (STREAM)   KEYS[7] meta   KEYS[8] errors   KEYS[9] inflight:<slot>
-- KEYS[10..] isum:<b> bucket hashes used by this page's items
-- ARGV[1] task id   ARGV[2] token   ARGV[3] page outcome (fetched|not_found|skipped|offsite)
-- ARGV[4] item count, then 6 values per item:
--   KEYS index of its bucket, key digest, checksum12..status letter, item key, status, JSON
--
-- Returns {code, new, updated, unchanged}; code 1 = committed, 0 = fenced (the token is
-- not the current lease holder's), -1 = fenced because the lease deadline has passed.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id, token = ARGV[1], ARGV[2]

if redis.call('HGET', KEYS[1], id) ~= token then
  redis.call('HINCRBY', KEYS[5], 'fenced', 1)
  return {0, 0, 0, 0}
end
local deadline = redis.call('ZSCORE', KEYS[9], id)
if not deadline or tonumber(deadline) < now then
  redis.call('HINCRBY', KEYS[5], 'fenced', 1)
  return {-1, 0, 0, 0}
end

local status_of = {o = 'ok', a = 'anchor_missing', n = 'page_not_found', s = 'skipped',
                   f = 'offsite'}
local new, updated, unchanged = 0, 0, 0
-- Status counter changes are summed here and written once per status after the loop:
-- one HINCRBY per item would be ~30 per page (and, replicated by effects, as many AOF records).
local delta = {}
local count = tonumber(ARGV[4])
for i = 0, count - 1 do
  local base = 5 + 6 * i
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
    redis.call('XADD', KEYS[6], '*', 'key', key, 'sum', string.sub(value, 1, 12),
               'kind', kind, 'task', id, 'data', data)
  end
end

for status, n in pairs(delta) do
  if n ~= 0 then redis.call('HINCRBY', KEYS[5], 'status:' .. status, n) end
end
redis.call('ZREM', KEYS[9], id)
redis.call('HDEL', KEYS[1], id)
redis.call('HDEL', KEYS[2], id)
redis.call('SREM', KEYS[3], id)
redis.call('HDEL', KEYS[4], id)
redis.call('HDEL', KEYS[8], id)
redis.call('HINCRBY', KEYS[5], 'commits', 1)
redis.call('HINCRBY', KEYS[5], 'pages_done', 1)
redis.call('HINCRBY', KEYS[5], 'pages:' .. ARGV[3], 1)
if new > 0 then redis.call('HINCRBY', KEYS[5], 'items_new', new) end
if updated > 0 then redis.call('HINCRBY', KEYS[5], 'items_updated', updated) end
if unchanged > 0 then redis.call('HINCRBY', KEYS[5], 'items_unchanged', unchanged) end
redis.call('HSET', KEYS[7], 'last_commit_at', now)
return {1, new, updated, unchanged}
