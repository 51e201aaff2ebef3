-- assign.lua: automatic slot ownership, run by every consumer on each heartbeat.
-- Live consumers with automatic slots (the ring: heartbeat within the cutoff) are sorted
-- by id; consumer i of n wants the slots s with s % n == i. It takes a wanted slot whose
-- owner lease is free, renews the ones it holds, and drops held slots it no longer
-- wants, so that after a consumer joins or leaves every slot has exactly one owner
-- within one lease period. Pinned consumers (--slots 0,3 / --partition i/n) are not in
-- the ring, so automatic consumers share every slot between themselves, and a pinned
-- consumer takes the owner lease of its slots (the automatic owner yields them on its
-- next beat; if the pinned consumer goes away its leases expire and the slots return to
-- their automatic owner). Ownership only steers scheduling; task leases and fencing keep
-- overlaps during handover safe.
--
-- KEYS[1] consumers (ZSET id -> last heartbeat ms, every consumer; pruned here)
-- KEYS[2] ring (ZSET id -> last heartbeat ms, consumers with automatic slots)
-- KEYS[3..S+2] owner:<0..S-1> (STRING owner id, with a PX lease)
-- ARGV[1] consumer id   ARGV[2] owner lease ms   ARGV[3] liveness cutoff ms
-- ARGV[4] "auto" or "pinned"   ARGV[5] pinned slots as "0,3,5" (pinned mode)
--
-- Returns {live automatic consumer count, owned slot, owned slot, ...}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local me, px, cutoff = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local auto = ARGV[4] ~= 'pinned'
redis.call('ZADD', KEYS[1], now, me)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 20 * cutoff)
if auto then
  redis.call('ZADD', KEYS[2], now, me)
else
  redis.call('ZREM', KEYS[2], me)
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 20 * cutoff)
local alive = redis.call('ZRANGEBYSCORE', KEYS[2], now - cutoff, '+inf')
table.sort(alive)
local index, n = 0, #alive
for i, id in ipairs(alive) do
  if id == me then index = i - 1 end
end
local pinned = {}
if not auto then
  for s in string.gmatch(ARGV[5], '%d+') do pinned[tonumber(s)] = true end
end
local out = {n}
for s = 0, #KEYS - 3 do
  local key = KEYS[s + 3]
  local wanted
  if auto then wanted = (s % n) == index else wanted = pinned[s] == true end
  local owner = redis.call('GET', key)
  if wanted then
    if not owner or (not auto and owner ~= me) then
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
