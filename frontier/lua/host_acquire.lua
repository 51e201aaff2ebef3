-- host_acquire.lua: take a permit to start one request on a host, for the whole fleet.
-- A host (scheme://host:port) has at most `limit` permits out at once, and permits are
-- handed out at most one per `delay` (the larger of the caller's delay and the host's
-- robots.txt Crawl-delay); while a 429/503 block runs (host_block.lua) none is. A permit
-- is leased like a task: its holder renews it (host_renew.lua) and releases it when the
-- response is in; a holder that dies leaks it for one lease at most, since expired
-- permits are dropped here first.
--
-- Both keys expire (host state is not kept forever: a host's `next_at` or delay outlived
-- the robots.txt that set it): permits a lease after the last one runs out, state
-- `state ttl` after its last write (kept longer than the next start it holds).
--
-- KEYS  permits state
--       (permits: ZSET token -> lease deadline; state: HASH next_at, blocked_until,
--       block_reason, robots_delay_ms, robots_delay_asked, limit, delay_ms, started,
--       last_at)
-- ARGV  token, concurrency limit, delay ms, permit lease ms, state ttl ms
--
-- Returns {1, delay ms in force, 'ok'} granted, or {0, ms to wait before asking again,
-- why} with why 'blocked' (Retry-After), 'delay' (the next start is not due) or 'full'.
local permits, state = KEYS[1], KEYS[2]
local token, limit, delay_ms, lease_ms = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local state_ttl = tonumber(ARGV[5])

local now = now_ms()
redis.call('ZREMRANGEBYSCORE', permits, '-inf', '(' .. now)
local blocked = tonumber(redis.call('HGET', state, 'blocked_until') or '0')
if blocked > now then
  return {0, blocked - now, 'blocked'}
end
local robots_delay = tonumber(redis.call('HGET', state, 'robots_delay_ms') or '0')
if robots_delay > delay_ms then delay_ms = robots_delay end
local next_at = tonumber(redis.call('HGET', state, 'next_at') or '0')
if next_at > now then
  return {0, next_at - now, 'delay'}
end
if redis.call('ZCARD', permits) >= limit then
  -- A release frees a permit at any moment: ask again soon (never later than the
  -- earliest lease runs out).
  local first = redis.call('ZRANGE', permits, 0, 0, 'WITHSCORES')
  return {0, math.max(1, math.min(25, tonumber(first[2]) - now)), 'full'}
end
redis.call('ZADD', permits, now + lease_ms, token)
local last = redis.call('ZRANGE', permits, -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', permits, tonumber(last[2]) + lease_ms - now)
redis.call('HSET', state, 'next_at', now + delay_ms, 'last_at', now, 'limit', limit,
           'delay_ms', delay_ms)
redis.call('HINCRBY', state, 'started', 1)
redis.call('PEXPIRE', state, math.max(state_ttl, 2 * delay_ms))
return {1, delay_ms, 'ok'}
