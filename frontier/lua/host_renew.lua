-- host_renew.lua: the heartbeat of the permits one consumer holds on one host. A permit
-- whose lease has run out is not revived (as with task leases, expiry is final): it is
-- dropped and reported lost.
--
-- KEYS  permits
-- ARGV  permit lease ms, then the tokens
--
-- Returns the lost tokens.
local permits = KEYS[1]
local lease_ms = tonumber(ARGV[1])
local FIXED_ARGS = 1

local now = now_ms()
local lost = {}
for i = FIXED_ARGS + 1, #ARGV do
  local deadline = redis.call('ZSCORE', permits, ARGV[i])
  if deadline and tonumber(deadline) >= now then
    redis.call('ZADD', permits, 'XX', now + lease_ms, ARGV[i])
  else
    redis.call('ZREM', permits, ARGV[i])
    lost[#lost + 1] = ARGV[i]
  end
end
-- The key expires a lease after its last permit would (host_acquire.lua).
local last = redis.call('ZRANGE', permits, -1, -1, 'WITHSCORES')
if last[2] then
  redis.call('PEXPIRE', permits, tonumber(last[2]) + lease_ms - now)
end
return lost
