-- host_robots.lua: the Crawl-delay of a host's robots.txt, for every consumer of the
-- fleet (host_acquire.lua spaces starts by the larger of it and the caller's delay).
-- Written at each parse, 0 included, so a robots.txt that drops its delay lifts it; the
-- delay asked for is kept beside the one applied (capped by --max-crawl-delay), for
-- status. The state expires like host_acquire.lua's.
--
-- KEYS  state
-- ARGV  delay ms applied, delay asked for (seconds, as the file says), state ttl ms
local state = KEYS[1]
local delay_ms, asked, state_ttl = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])

redis.call('HSET', state, 'robots_delay_ms', delay_ms, 'robots_delay_asked', asked)
redis.call('PEXPIRE', state, math.max(state_ttl, 2 * delay_ms))
return delay_ms
