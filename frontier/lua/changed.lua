-- changed.lua: mark crawls changed in the change journal (frontier/registry.py): one
-- sequence number for this mark, the score of every crawl named. Atomic, so a reader
-- that saw sequence N has seen every mark numbered N or less.
--
-- KEYS  changed, seq
--       (the journal ZSET crawl id -> sequence, and the sequence counter: registry
--       keys sharing the {changes} hash tag, never a crawl's)
-- ARGV  crawl ids
--
-- Returns the sequence number of this mark.
local changed, seq = KEYS[1], KEYS[2]

local number = redis.call('INCR', seq)
for i = 1, #ARGV do
  redis.call('ZADD', changed, number, ARGV[i])
end
return number
