-- complete.lua: global completion detection. The crawl is complete when the producer is
-- done and every queue, delayed set and in-flight set of every slot ever used is empty
-- (dead-lettered tasks count as finished). Marks the crawl finished once.
--
-- KEYS[1] meta, then for each slot 0..max_slots-1: q:<slot>, delayed:<slot>, inflight:<slot>
-- ARGV[1] max_slots the caller built the key list from
--
-- Returns 1 complete, 0 not complete, -2 stale slot list.
if redis.call('HGET', KEYS[1], 'max_slots') ~= ARGV[1] then
  return -2
end
if redis.call('HGET', KEYS[1], 'producer') ~= 'done' then
  return 0
end
for i = 2, #KEYS, 3 do
  if redis.call('LLEN', KEYS[i]) > 0 then return 0 end
  if redis.call('ZCARD', KEYS[i + 1]) > 0 then return 0 end
  if redis.call('ZCARD', KEYS[i + 2]) > 0 then return 0 end
end
if redis.call('HGET', KEYS[1], 'state') ~= 'finished' then
  local t = redis.call('TIME')
  redis.call('HSET', KEYS[1], 'state', 'finished',
             'finished_at', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
end
return 1
