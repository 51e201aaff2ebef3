-- retire.lua: unlist a crawl a consumer saw finished or failed, unless it was reopened
-- since (its score in `active` changed): see frontier/registry.py for why this keeps
-- the registry complete without a cross-slot transaction.
--
-- KEYS  active
--       (the registry ZSET, not a crawl key: this script touches nothing else)
-- ARGV  crawl id, the score the caller read
--
-- Returns 1 retired, 0 left (reopened meanwhile, or already gone).
local active = KEYS[1]
local crawl_id, seen = ARGV[1], tonumber(ARGV[2])

local score = redis.call('ZSCORE', active, crawl_id)
if score and tonumber(score) == seen then
  return redis.call('ZREM', active, crawl_id)
end
return 0
