-- refresh.lua: start a refresh round of a finished crawl. The crawl goes back to
-- `producing` with an empty `seen` set, so the producer enqueues every page of the
-- inventory again (each with its validators: frontier/refresh.py); per-round figures
-- start from zero. Dead letters of the last round are dropped: a refresh retries them.
-- Items, their checksums (isum) and page validators (pages) are kept: they are what
-- makes the round cheap and its change events exact.
--
-- A crawl that is not finished (new, failed, or a round still producing or running, e.g.
-- an interrupted refresh) is left as it is: producing again resumes it.
--
-- KEYS  meta stats seen task tries reaped errors dlq dlq_why
-- ARGV  (none)
--
-- Returns {started (1/0), round}.
local meta, stats, seen, task, tries = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local reaped, errors, dlq, dlq_why = KEYS[6], KEYS[7], KEYS[8], KEYS[9]

local round = tonumber(redis.call('HGET', meta, 'round') or '0')
if redis.call('HGET', meta, 'state') ~= 'finished' then
  return {0, round}
end
round = redis.call('HINCRBY', meta, 'round', 1)
redis.call('HINCRBY', meta, 'refreshes', 1)
redis.call('HSET', meta, 'state', 'producing', 'producer', 'running',
           'refresh_started_at', now_ms())
redis.call('HDEL', meta, 'finished_at', 'started_at', 'error', 'next_refresh_at')
redis.call('DEL', seen, task, tries, reaped, errors, dlq, dlq_why)
-- Per-round page counters (progress, outcomes); item counters are totals and stay.
local fields = redis.call('HKEYS', stats)
for _, name in ipairs(fields) do
  if name == 'pages_done' or name == 'enqueued' or string.sub(name, 1, 6) == 'pages:' then
    redis.call('HDEL', stats, name)
  end
end
return {1, round}
