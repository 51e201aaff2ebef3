-- host_block.lua: a host answered 429 or 503 with Retry-After: no consumer of the fleet
-- starts a request on it before then (host_acquire.lua refuses). A block never shortens
-- one already running.
--
-- KEYS  state
-- ARGV  block ms, reason, state ttl ms (the state outlives the block)
--
-- Returns the time the host is blocked until (ms).
local state = KEYS[1]
local block_ms, reason, state_ttl = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])

local until_ms = now_ms() + block_ms
local current = tonumber(redis.call('HGET', state, 'blocked_until') or '0')
if until_ms > current then
  redis.call('HSET', state, 'blocked_until', until_ms, 'block_reason', reason)
  redis.call('HINCRBY', state, 'blocks', 1)
  redis.call('PEXPIRE', state, state_ttl + block_ms)
  return until_ms
end
return current
