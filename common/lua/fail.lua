-- fail.lua: a delivery failed cleanly (transient HTTP error, timeout, ...). Schedule a
-- retry after a backoff, or dead-letter the task when it has used its deliveries.
--
-- KEYS[1] lease   KEYS[2] tries   KEYS[3] reaped   KEYS[4] stats   KEYS[5] errors
-- KEYS[6] dlq     KEYS[7] dlq:why KEYS[8] meta     KEYS[9] inflight:<slot>
-- KEYS[10] delayed:<slot of the task under the current slot count>
-- ARGV[1] task id   ARGV[2] token   ARGV[3] retry delay ms   ARGV[4] max deliveries
-- ARGV[5] error JSON   ARGV[6] "1" to dead-letter now (a permanent, deterministic error)
-- ARGV[7] slot count the caller computed KEYS[10] with
--
-- Returns {code, outcome, deliveries}: code 1 done, 0 fenced, -2 stale slot count
-- (refresh and call again); outcome "retry" or "dead".
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id, token = ARGV[1], ARGV[2]
if redis.call('HGET', KEYS[1], id) ~= token then
  redis.call('HINCRBY', KEYS[4], 'fenced', 1)
  return {0, 'fenced', 0}
end
if redis.call('HGET', KEYS[8], 'slots') ~= ARGV[7] then
  return {-2, 'stale', 0}
end
local tries = tonumber(redis.call('HGET', KEYS[2], id) or '0')
local max = tonumber(ARGV[4])
redis.call('ZREM', KEYS[9], id)
redis.call('HDEL', KEYS[1], id)
redis.call('SREM', KEYS[3], id)
redis.call('HSET', KEYS[5], id, ARGV[5])
if ARGV[6] == '1' or tries >= max then
  local err = cjson.decode(ARGV[5])
  local why = cjson.encode({reason = err.reason or 'error', error = err.error,
                            tries = tries, at = now})
  redis.call('ZADD', KEYS[6], now, id)
  redis.call('HSET', KEYS[7], id, why)
  redis.call('HINCRBY', KEYS[4], 'dead', 1)
  return {1, 'dead', tries}
end
redis.call('ZADD', KEYS[10], now + tonumber(ARGV[3]), id)
redis.call('HINCRBY', KEYS[4], 'retries', 1)
return {1, 'retry', tries}
