-- forget.lua: delete every key of one crawl (`invcrawl forget`), unless it is in use:
-- a consumer holds one of its pages under a live lease, or serves it (its heartbeat on
-- the crawl is within three of its own leases). The registry entries (`crawls`,
-- `active`) are not crawl keys: the caller removes them afterwards, with commands of
-- their own (Redis Cluster: this script touches the crawl's hash slot only).
--
-- KEYS  meta consumers cinfo, then every other key of the crawl (frontier/forget.py
--       lists them from frontier/keys.py), the inflight:<slot> sets among them
-- ARGV  force (1/0), default lease ms (a consumer that did not record its own),
--       count n of inflight sets, then their n KEYS indexes
--
-- Returns {deleted (1/0), keys deleted, pages held, consumers serving, the longest lease
-- of those consumers (ms)}: in use and not forced, nothing is deleted.
local meta, consumers, cinfo = KEYS[1], KEYS[2], KEYS[3]
local force, default_lease, n = ARGV[1] == '1', tonumber(ARGV[2]), tonumber(ARGV[3])
local FIXED_ARGS = 3

local now = now_ms()
local held = 0
for i = 1, n do
  held = held + redis.call('ZCOUNT', KEYS[tonumber(ARGV[FIXED_ARGS + i])], now, '+inf')
end
local serving, longest = 0, 0
local beats = redis.call('ZRANGE', consumers, 0, -1, 'WITHSCORES')
for i = 1, #beats, 2 do
  local lease = default_lease
  local ok, info = pcall(cjson.decode, redis.call('HGET', cinfo, beats[i]) or '')
  if ok and type(info) == 'table' and tonumber(info.lease_ms) then
    lease = tonumber(info.lease_ms)
  end
  if now - tonumber(beats[i + 1]) <= 3 * lease then
    serving = serving + 1
    longest = math.max(longest, lease)
  end
end
if (held > 0 or serving > 0) and not force then
  return {0, 0, held, serving, longest}
end

-- DEL takes many keys, but Lua's unpack is bounded by its stack: batches.
local deleted = redis.call('DEL', meta, consumers, cinfo)
local BATCH = 500
for first = 4, #KEYS, BATCH do
  deleted = deleted + redis.call('DEL', unpack(KEYS, first, math.min(first + BATCH - 1, #KEYS)))
end
return {1, deleted, held, serving, longest}
