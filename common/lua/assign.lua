-- assign.lua: automatic slot ownership, run by every consumer on each heartbeat.
-- Live consumers (heartbeat within the cutoff) are sorted by id; consumer i of n wants
-- the slots s with s % n == i. It takes a wanted slot whose owner lease is free, renews
-- the ones it holds, and drops held slots it no longer wants, so that after a consumer
-- joins or leaves every slot has exactly one owner within one lease period. Ownership
-- only steers scheduling; task leases and fencing keep overlaps during handover safe.
--
-- KEYS[1] consumers (ZSET id -> last heartbeat ms)
-- KEYS[2..S+1] owner:<0..S-1> (STRING owner id, with a PX lease)
-- ARGV[1] consumer id   ARGV[2] owner lease ms   ARGV[3] liveness cutoff ms
-- ARGV[4] "auto" or "pinned"   ARGV[5] pinned slots as "0,3,5" (pinned mode)
--
-- Returns {live consumer count, owned slot, owned slot, ...}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local me, px, cutoff = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], now, me)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 20 * cutoff)
local alive = redis.call('ZRANGEBYSCORE', KEYS[1], now - cutoff, '+inf')
table.sort(alive)
local index, n = 0, #alive
for i, id in ipairs(alive) do
  if id == me then index = i - 1 end
end
local pinned = {}
if ARGV[4] == 'pinned' then
  for s in string.gmatch(ARGV[5], '%d+') do pinned[tonumber(s)] = true end
end
local out = {n}
for s = 0, #KEYS - 2 do
  local key = KEYS[s + 2]
  local wanted
  if ARGV[4] == 'pinned' then wanted = pinned[s] == true else wanted = (s % n) == index end
  local owner = redis.call('GET', key)
  if wanted then
    if not owner then
      redis.call('SET', key, me, 'PX', px)
      out[#out + 1] = s
    elseif owner == me then
      redis.call('PEXPIRE', key, px)
      out[#out + 1] = s
    end
  elseif owner == me then
    redis.call('DEL', key)
  end
end
return out
