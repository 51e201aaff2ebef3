-- _prelude.lua: prepended to every script of this folder by frontier/scripts.py.
--
-- now_ms()                 Redis server time in milliseconds (every deadline and
--                          timestamp of invcrawl is server time: clocks of consumers
--                          never matter).
-- stale_layout(meta, field, value)
--                          the STALE error reply when the caller built its slot keys
--                          under another layout (`slots` or `max_slots` of the
--                          crawl's meta), else nil. Scripts return it before they
--                          write anything; the runner turns it into
--                          frontier.scripts.StaleLayout (refresh the layout, call
--                          again).
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function stale_layout(meta, field, value)
  if redis.call('HGET', meta, field) ~= value then
    return redis.error_reply('STALE slot layout changed (the crawl was resharded)')
  end
end
