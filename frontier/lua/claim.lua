-- claim.lua: lease up to N ready tasks from one or more slots of a crawl, atomically.
--
-- A task leaves its queue only here, and in the same step gets a lease (deadline in
-- Redis server time), a fencing token and a delivery count. Due retries (delayed) are
-- promoted to their queue first.
--
-- KEYS  meta stats task lease tries reaped, then per slot j = 0..k-1:
--       q:<slot> delayed:<slot> inflight:<slot>
-- ARGV  consumer id, lease ms, max tasks, busy ("1": the caller already holds tasks,
--       so suspects are not given to it), then the k slot numbers in key order
--
-- Returns {now, id, token, deliveries, payload, slot, suspect, id, ...}.
-- A suspect (its previous delivery ended by lease expiry: its consumer died or hung on
-- it) is only handed to an idle caller, and alone, so a poison page cannot drag healthy
-- pages into the dead-letter queue.
local meta, stats, task, lease, tries, reaped = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local consumer, lease_ms, max, busy = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] == '1'
local FIXED_KEYS, FIXED_ARGS = 6, 4

local now = now_ms()
local out = {now}
local n = 0
local took_suspect = false

for j = 0, (#KEYS - FIXED_KEYS) / 3 - 1 do
  if n >= max or took_suspect then break end
  local q = KEYS[FIXED_KEYS + 1 + 3 * j]
  local delayed = KEYS[FIXED_KEYS + 2 + 3 * j]
  local inflight = KEYS[FIXED_KEYS + 3 + 3 * j]
  local slot = ARGV[FIXED_ARGS + 1 + j]
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, 512)) do
    redis.call('RPUSH', q, id)
    redis.call('ZREM', delayed, id)
  end
  local rotations = redis.call('LLEN', q)
  while n < max and not took_suspect do
    local id = redis.call('LPOP', q)
    if not id then break end
    local payload = redis.call('HGET', task, id)
    if not payload then
      redis.call('HINCRBY', stats, 'orphans', 1)
    else
      local suspect = redis.call('SISMEMBER', reaped, id) == 1
      if suspect and (busy or n > 0) then
        redis.call('RPUSH', q, id)
        rotations = rotations - 1
        if rotations <= 0 then break end
      else
        local token = consumer .. ':' .. redis.call('HINCRBY', stats, 'fence', 1)
        local deliveries = redis.call('HINCRBY', tries, id, 1)
        redis.call('ZADD', inflight, now + lease_ms, id)
        redis.call('HSET', lease, id, token)
        out[#out + 1] = id
        out[#out + 1] = token
        out[#out + 1] = deliveries
        out[#out + 1] = payload
        out[#out + 1] = slot
        out[#out + 1] = suspect and 1 or 0
        n = n + 1
        took_suspect = suspect
      end
    end
  end
end
if n > 0 then
  redis.call('HINCRBY', stats, 'claims', n)
  redis.call('HSETNX', meta, 'started_at', now)
end
return out
