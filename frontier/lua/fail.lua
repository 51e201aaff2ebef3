-- fail.lua: a delivery failed cleanly (transient HTTP error, timeout, ...). Schedule a
-- retry after a backoff, or dead-letter the task when it has used its deliveries (or at
-- once, for a permanent error).
--
-- KEYS  meta stats lease tries reaped errors dlq dlq:why inflight:<slot>
--       delayed:<slot of the task under the current slot count>
-- ARGV  task id, token, retry delay ms, max deliveries, error JSON,
--       dead now ("1": a permanent, deterministic error), slot count of the caller
--
-- Returns {code, outcome, deliveries}: code 1 done, 0 fenced; outcome "retry", "dead"
-- or "fenced". STALE error on a stale slot count.
local meta, stats, lease, tries, reaped = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local errors, dlq, dlq_why, inflight, delayed = KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local id, token, delay_ms, max = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local error_json, dead_now, slots = ARGV[5], ARGV[6] == '1', ARGV[7]

if redis.call('HGET', lease, id) ~= token then
  redis.call('HINCRBY', stats, 'fenced', 1)
  return {0, 'fenced', 0}
end
local stale = stale_layout(meta, 'slots', slots)
if stale then return stale end
local now = now_ms()
local deliveries = tonumber(redis.call('HGET', tries, id) or '0')
redis.call('ZREM', inflight, id)
redis.call('HDEL', lease, id)
redis.call('SREM', reaped, id)
redis.call('HSET', errors, id, error_json)
if dead_now or deliveries >= max then
  local err = cjson.decode(error_json)
  local why = cjson.encode({reason = err.reason or 'error', error = err.error,
                            tries = deliveries, at = now})
  redis.call('ZADD', dlq, now, id)
  redis.call('HSET', dlq_why, id, why)
  redis.call('HINCRBY', stats, 'dead', 1)
  return {1, 'dead', deliveries}
end
redis.call('ZADD', delayed, now + delay_ms, id)
redis.call('HINCRBY', stats, 'retries', 1)
return {1, 'retry', deliveries}
