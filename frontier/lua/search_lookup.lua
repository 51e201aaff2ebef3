-- search_lookup.lua: the best candidates of a query in one crawl's search index
-- (frontier/search.py). Reads only: one call per crawl instead of one GET per term and
-- crawl. The same rule as score_postings in common/search/postings.py (a user without
-- scripts runs that one on plain GETs): every posting of every term is read, so which
-- items are proposed never depends on the order in which they were committed, nor on
-- the caller's limit.
--
-- KEYS  meta, then the slog:<h> term logs of the terms
-- ARGV  wanted (candidates returned, at most), items (of the crawl, for the rarity of a
--       term), spread (a term found in more items than this only adds to candidates
--       rarer terms found), then per term: KEYS index of its log, its tag (4 bytes), its
--       weight (times 1000, an integer)
--
-- Returns {counts, postings, scores}: per term the number of items it was found in;
-- the candidates' postings (6 bytes each, joined), best first, ties by the posting's
-- bytes; their scores (times 1000, integers); {} when the crawl is gone.
local meta = KEYS[1]
if redis.call('EXISTS', meta) == 0 then return {} end
local wanted, items, spread = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local logs, terms = {}, {}  -- each log read once a call
for i = 4, #ARGV, 3 do
  local key, tag = KEYS[tonumber(ARGV[i])], ARGV[i + 1]
  local log = logs[key]
  if log == nil then
    log = redis.call('GET', key) or ''
    logs[key] = log
  end
  local found, seen, at = {}, {}, find_entry(log, tag, 1)
  while at do
    local posting = string.sub(log, at + TAG_BYTES, at + ENTRY_BYTES - 1)
    if not seen[posting] then
      seen[posting] = true
      found[#found + 1] = posting
    end
    at = find_entry(log, tag, at + ENTRY_BYTES)
  end
  terms[#terms + 1] = {found = found, weight = tonumber(ARGV[i + 2]) / 1000, n = #terms + 1}
end
-- rarest first: a common term then only adds to what the rarer ones found
local order = {}
for i = 1, #terms do order[i] = terms[i] end
table.sort(order, function(a, b)
  if #a.found ~= #b.found then return #a.found < #b.found end
  return a.n < b.n
end)
local scores, listed = {}, {}
for _, term in ipairs(order) do
  local weight = term.weight * (1 + math.log((1 + items) / (1 + #term.found)))
  local opens = #term.found <= spread or #listed == 0
  for _, posting in ipairs(term.found) do
    local had = scores[posting]
    if had then
      scores[posting] = had + weight
    elseif opens then
      scores[posting] = weight
      listed[#listed + 1] = posting
    end
  end
end
table.sort(listed, function(a, b)
  if scores[a] ~= scores[b] then return scores[a] > scores[b] end
  return a < b
end)
local counts, best, points = {}, {}, {}
for i = 1, #terms do counts[i] = #terms[i].found end
for i = 1, math.min(wanted, #listed) do
  best[i] = listed[i]
  points[i] = math.floor(scores[listed[i]] * 1000 + 0.5)
end
return {counts, table.concat(best), points}
