-- reap.lua: return expired leases of one slot to a queue, or dead-letter them when the
-- task has used its deliveries. Idempotent: a task already reaped, committed or renewed
-- is skipped. The caller lists candidate ids (from ZRANGEBYSCORE) and their target
-- queues; this script re-checks each one.
--
-- KEYS[1] lease   KEYS[2] tries   KEYS[3] reaped   KEYS[4] stats   KEYS[5] dlq
-- KEYS[6] dlq:why KEYS[7] errors  KEYS[8] meta     KEYS[9] inflight:<slot>
-- KEYS[10..] target queues q:<slot>
-- ARGV[1] max deliveries   ARGV[2] slot count the caller computed targets with
-- ARGV[3] count, then per task: task id, KEYS index of its target queue
--
-- Returns {requeued, dead}, or {-2, 0} on a stale slot count.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('HGET', KEYS[8], 'slots') ~= ARGV[2] then
  return {-2, 0}
end
local max = tonumber(ARGV[1])
local requeued, dead = 0, 0
for i = 0, tonumber(ARGV[3]) - 1 do
  local id = ARGV[4 + 2 * i]
  local deadline = redis.call('ZSCORE', KEYS[9], id)
  if deadline and tonumber(deadline) < now then
    redis.call('ZREM', KEYS[9], id)
    redis.call('HDEL', KEYS[1], id)
    local tries = tonumber(redis.call('HGET', KEYS[2], id) or '0')
    if tries >= max then
      local last = redis.call('HGET', KEYS[7], id)
      local why = {reason = 'lease expired', tries = tries, at = now}
      if last then why.error = cjson.decode(last).error end
      redis.call('ZADD', KEYS[5], now, id)
      redis.call('HSET', KEYS[6], id, cjson.encode(why))
      redis.call('SREM', KEYS[3], id)
      redis.call('HINCRBY', KEYS[4], 'dead', 1)
      dead = dead + 1
    else
      redis.call('RPUSH', KEYS[tonumber(ARGV[5 + 2 * i])], id)
      redis.call('SADD', KEYS[3], id)
      requeued = requeued + 1
    end
  end
end
if requeued + dead > 0 then
  redis.call('HINCRBY', KEYS[4], 'reaped', requeued + dead)
end
return {requeued, dead}
