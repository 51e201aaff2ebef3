-- claim.lua: lease up to N ready tasks from one or more slots, atomically.
--
-- A task leaves its queue only here, and in the same step gets a lease (deadline in
-- Redis server time), a fencing token and a delivery count.
--
-- KEYS[1] lease      HASH  task id -> fencing token
-- KEYS[2] tries      HASH  task id -> deliveries
-- KEYS[3] reaped     SET   ids whose last delivery expired (suspects)
-- KEYS[4] task       HASH  task id -> payload
-- KEYS[5] stats      HASH  counters (fence sequence, claims, orphans)
-- KEYS[6] meta       HASH  crawl metadata (started_at)
-- then for each slot j = 0..k-1:
--   KEYS[7+3j] q:<slot>  KEYS[8+3j] delayed:<slot>  KEYS[9+3j] inflight:<slot>
-- ARGV[1] consumer id   ARGV[2] lease ms   ARGV[3] max tasks
-- ARGV[4] "1" if the caller already holds tasks (then suspects are not given to it)
-- ARGV[5..4+k] slot numbers, in the order of the key triples
--
-- Returns {now, id, token, deliveries, payload, slot, suspect, id, ...}.
-- A suspect (its previous delivery ended by lease expiry: its consumer died or hung
-- on it) is only handed to an idle caller, and alone, so a poison page cannot drag
-- healthy pages into the dead-letter queue.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease_ms = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
local busy = ARGV[4] == '1'
local nslots = (#KEYS - 6) / 3
local out = {now}
local n = 0
local took_suspect = false

for j = 0, nslots - 1 do
  if n >= max or took_suspect then break end
  local q, delayed, inflight = KEYS[7 + 3 * j], KEYS[8 + 3 * j], KEYS[9 + 3 * j]
  local slot = ARGV[5 + j]
  local due = redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, 512)
  for _, id in ipairs(due) do
    redis.call('RPUSH', q, id)
    redis.call('ZREM', delayed, id)
  end
  local rotations = redis.call('LLEN', q)
  while n < max and not took_suspect do
    local id = redis.call('LPOP', q)
    if not id then break end
    local payload = redis.call('HGET', KEYS[4], id)
    if not payload then
      redis.call('HINCRBY', KEYS[5], 'orphans', 1)
    else
      local suspect = redis.call('SISMEMBER', KEYS[3], id) == 1
      if suspect and (busy or n > 0) then
        redis.call('RPUSH', q, id)
        rotations = rotations - 1
        if rotations <= 0 then break end
      else
        local seq = redis.call('HINCRBY', KEYS[5], 'fence', 1)
        local token = ARGV[1] .. ':' .. seq
        local tries = redis.call('HINCRBY', KEYS[2], id, 1)
        redis.call('ZADD', inflight, now + lease_ms, id)
        redis.call('HSET', KEYS[1], id, token)
        out[#out + 1] = id
        out[#out + 1] = token
        out[#out + 1] = tries
        out[#out + 1] = payload
        out[#out + 1] = slot
        out[#out + 1] = suspect and 1 or 0
        n = n + 1
        if suspect then took_suspect = true end
      end
    end
  end
end
if n > 0 then
  redis.call('HINCRBY', KEYS[5], 'claims', n)
  redis.call('HSETNX', KEYS[6], 'started_at', now)
end
return out
