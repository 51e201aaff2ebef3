-- renew.lua: the consumer heartbeat. Extends the leases the caller still holds, records
-- its liveness, and reports the tasks it has lost (fenced, reaped or expired).
--
-- KEYS[1] lease   KEYS[2] consumers (ZSET)   KEYS[3] cinfo (HASH)
-- KEYS[4..] inflight:<slot> sets of the tasks being renewed
-- ARGV[1] consumer id   ARGV[2] lease ms   ARGV[3] consumer info JSON
-- ARGV[4] count, then per task: task id, token, KEYS index of its inflight set
--
-- Returns {now, lost id, lost id, ...}. A lease whose deadline has passed is never
-- revived, even if nobody reaped it yet: expiry is final.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease_ms = tonumber(ARGV[2])
local out = {now}
for i = 0, tonumber(ARGV[4]) - 1 do
  local id, token = ARGV[5 + 3 * i], ARGV[6 + 3 * i]
  local inflight = KEYS[tonumber(ARGV[7 + 3 * i])]
  local deadline = redis.call('ZSCORE', inflight, id)
  if redis.call('HGET', KEYS[1], id) == token and deadline and tonumber(deadline) >= now then
    redis.call('ZADD', inflight, 'XX', now + lease_ms, id)
  else
    out[#out + 1] = id
  end
end
redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
return out
