-- assign.lua: automatic slot ownership, run by every consumer of a crawl on each
-- heartbeat. Live consumers with automatic slots (the ring: heartbeat within the
-- cutoff) are sorted by id; consumer i of n wants the slots s with s % n == i. It takes
-- a wanted slot whose owner lease is free, renews the ones it holds, and drops held
-- slots it no longer wants, so that after a consumer joins or leaves every slot has
-- exactly one owner within one lease period. Pinned consumers (--slots 0,3 /
-- --partition i/n) are not in the ring, so automatic consumers share every slot between
-- themselves, and a pinned consumer takes the owner lease of its slots (the automatic
-- owner yields them on its next beat; if the pinned consumer goes away its leases expire
-- and the slots return to their automatic owner). Ownership only steers scheduling;
-- task leases and fencing keep overlaps during handover safe.
--
-- KEYS  consumers ring, then owner:<0..S-1>
--       (consumers: every consumer, pruned here; ring: the consumers with automatic
--       slots; owner:<s>: STRING owner id with a PX lease)
-- ARGV  consumer id, owner lease ms, liveness cutoff ms, "auto" or "pinned",
--       pinned slots as "0,3,5" (pinned mode)
--
-- Returns {live automatic consumer count, owned slot, owned slot, ...}.
local consumers, ring = KEYS[1], KEYS[2]
local me, px, cutoff, mode, pinned_list = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], ARGV[5]
local FIXED_KEYS = 2

local now = now_ms()
local auto = mode ~= 'pinned'
redis.call('ZADD', consumers, now, me)
redis.call('ZREMRANGEBYSCORE', consumers, '-inf', now - 20 * cutoff)
if auto then
  redis.call('ZADD', ring, now, me)
else
  redis.call('ZREM', ring, me)
end
redis.call('ZREMRANGEBYSCORE', ring, '-inf', now - 20 * cutoff)
local alive = redis.call('ZRANGEBYSCORE', ring, now - cutoff, '+inf')
table.sort(alive)
local index, n = 0, #alive
for i, id in ipairs(alive) do
  if id == me then index = i - 1 end
end
local pinned = {}
if not auto then
  for s in string.gmatch(pinned_list, '%d+') do pinned[tonumber(s)] = true end
end
local out = {n}
for s = 0, #KEYS - FIXED_KEYS - 1 do
  local key = KEYS[FIXED_KEYS + 1 + s]
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
