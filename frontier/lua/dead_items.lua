-- dead_items.lua: the entries of a dead-lettered page get items with status `failed`
-- (and the dead letter's reason), so that the output keeps one item per inventory entry.
-- Written only while the task is still dead: a redrive that got in first wins. Idempotent
-- through the dedup rule (the same failed item twice adds nothing); a later redrive that
-- succeeds replaces them the same way (`update`).
--
-- KEYS  stats items dlq, then the isum:<b> bucket hashes used by this page's items
-- ARGV  task id, item count, then 6 values per item (as in commit.lua)
--
-- Returns {written (1) or not dead any more (0), new, updated, unchanged}.
local stats, items, dlq = KEYS[1], KEYS[2], KEYS[3]
local id, count = ARGV[1], tonumber(ARGV[2])
local FIXED_ARGS = 2

if not redis.call('ZSCORE', dlq, id) then
  return {0, 0, 0, 0}
end
local new, updated, unchanged = write_items(items, stats, id, FIXED_ARGS + 1, count)
return {1, new, updated, unchanged}
