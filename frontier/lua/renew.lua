-- renew.lua: the consumer heartbeat on one crawl. Extends the leases the caller still
-- holds, records its liveness, and reports the tasks it has lost (fenced, reaped or
-- expired).
--
-- KEYS  lease consumers cinfo, then the inflight:<slot> sets of the tasks being renewed
-- ARGV  consumer id, lease ms, consumer info JSON, count,
--       then per task: task id, token, KEYS index of its inflight set
--
-- Returns {now, lost id, lost id, ...}. A lease whose deadline has passed is never
-- revived, even if nobody reaped it yet: expiry is final.
local lease, consumers, cinfo = KEYS[1], KEYS[2], KEYS[3]
local consumer, lease_ms, info, count = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local FIXED_ARGS = 4

local now = now_ms()
local out = {now}
for i = 0, count - 1 do
  local base = FIXED_ARGS + 1 + 3 * i
  local id, token, inflight = ARGV[base], ARGV[base + 1], KEYS[tonumber(ARGV[base + 2])]
  local deadline = redis.call('ZSCORE', inflight, id)
  if redis.call('HGET', lease, id) == token and deadline and tonumber(deadline) >= now then
    redis.call('ZADD', inflight, 'XX', now + lease_ms, id)
  else
    out[#out + 1] = id
  end
end
redis.call('ZADD', consumers, now, consumer)
redis.call('HSET', cinfo, consumer, info)
return out
