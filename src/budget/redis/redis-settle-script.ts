import { PRELUDE } from './redis-lua-prelude.js';

/**
 * The settle script: the reservation freed and the spend charged at every level it is held at
 * (the tenant's ledger first, then each level inside it, as many as it has), each level's hash
 * read once, with the threshold markers the spend may cross in the same read, and written once.
 * Field layout: see redis-budget-scripts.ts.
 *
 * KEYS: leases, log, settled, levels, then the level hashes (the tenant's ledger first). A
 * reservation settles at the levels its id names.
 * ARGV: shift, id, tokens, nano, markerMs, leaseMs, windowMs or '', period starts or '',
 * thresholds "0.8,0.95" or '', level key prefixes "u,s", the log entry's level ids ("|<id>|<id>"),
 * then per level maxTokens, maxNano and member.
 * Returns {0} when the id had settled before (a retry: nothing charged), else {1, tenant spent
 * tokens, tenant spent nano, then per crossing: level (1-based), 'T' or 'N', threshold (text),
 * spent, limit}.
 */
export const SETTLE_LUA = `${PRELUDE}
local leases, log, settled, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id = ARGV[2]
local now = now_ms()
if redis.call('ZADD', settled, 'NX', now + tonumber(ARGV[5]), id) == 0 then return {0} end
local base = string.sub(leases, 1, -7)
if now % 16 == 0 then
  redis.call('ZREMRANGEBYSCORE', settled, '-inf', now)
  sweep_levels(base, index, now)
end
local tok, nano, lease = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[6])
local hold_t, hold_n = 0, 0
if redis.call('ZREM', leases, id) == 1 then hold_t, hold_n = parse_id(id) end
local win = ARGV[7]
local ps, pe = period_of(now, ARGV[8])
local P = win ~= '' and prefixes_of(ARGV[10]) or nil
local TH = nil
if ARGV[9] ~= '' then
  TH = {}
  for t in string.gmatch(ARGV[9], '[^,]+') do TH[#TH + 1] = t end
end
if win ~= '' then redis.call('ZADD', log, now, id .. '|' .. ARGV[3] .. '|' .. ARGV[4] .. ARGV[11]) end
local out = {1, 0, 0}
local FIELDS, NONE = 11, {}
local function sums() return 'rt', 'rn', 'st', 'sn', 'wm', 'wt', 'wn', 'ps', 'pt', 'pn', 'xp' end
-- The markers of every threshold a level's limits have: read with its sums.
local function markers(a, ask)
  local marks = {}
  for c = 0, 1 do
    local code, limit = c == 0 and 'T' or 'N', ARGV[a + c]
    if limit ~= '' and tonumber(limit) > 0 then
      for _, t in ipairs(TH) do
        marks[#marks + 1] = {code, limit, t}
        ask[#ask + 1] = 'x:' .. code .. ':' .. limit .. ':' .. t
      end
    end
  end
  return marks
end
for i = 1, #KEYS - 4 do
  local key, a = KEYS[4 + i], 12 + (i - 1) * 3
  local member = ARGV[a + 2]
  local f, ask, marks = nil, nil, NONE
  if TH then
    ask = {sums()}
    marks = markers(a, ask)
    f = redis.call('HMGET', key, unpack(ask))
  else
    f = redis.call('HMGET', key, sums())
  end
  local b_t, b_n
  if win ~= '' then
    if i == 1 then
      -- This settle's own log entry is in already; the roll never drops it (it is from now).
      b_t, b_n = roll_window(base, key, log, win, f[5], f[6], f[7], now, P)
    else
      b_t, b_n = level_window(log, member, f[5], f[6], f[7], win, now, P)
    end
    if f[5] ~= win then b_t, b_n = b_t - tok, b_n - nano end
  elseif ps then
    if tonumber(f[8]) == ps then b_t, b_n = num(f[9]), num(f[10]) else b_t, b_n = 0, 0 end
  else
    b_t, b_n = num(f[3]), num(f[4])
  end
  local a_t, a_n = b_t + tok, b_n + nano
  local w = {'st', num(f[3]) + tok, 'sn', num(f[4]) + nano}
  if hold_t ~= 0 or hold_n ~= 0 then w[#w + 1] = 'rt'; w[#w + 1] = floor0(num(f[1]) - hold_t); w[#w + 1] = 'rn'; w[#w + 1] = floor0(num(f[2]) - hold_n) end
  if win ~= '' then w[#w + 1] = 'wm'; w[#w + 1] = win; w[#w + 1] = 'wt'; w[#w + 1] = a_t; w[#w + 1] = 'wn'; w[#w + 1] = a_n end
  if ps then w[#w + 1] = 'ps'; w[#w + 1] = ps; w[#w + 1] = 'pt'; w[#w + 1] = a_t; w[#w + 1] = 'pn'; w[#w + 1] = a_n end
  for k, mk in ipairs(marks) do
    local code, limit, t = mk[1], mk[2], mk[3]
    local before, after = b_t, a_t
    if code == 'N' then before, after = b_n, a_n end
    local at = tonumber(t) * tonumber(limit)
    if before < at and at <= after then
      local m = tonumber(f[FIELDS + k])
      local again = m == nil
      if m ~= nil then
        if ps then again = m ~= ps elseif win ~= '' then again = now - m >= tonumber(win) end
      end
      if again then
        w[#w + 1] = ask[FIELDS + k]; w[#w + 1] = ps or ((win ~= '' and now) or 0)
        out[#out + 1] = i; out[#out + 1] = code; out[#out + 1] = t; out[#out + 1] = after; out[#out + 1] = tonumber(limit)
      end
    end
  end
  local action = nil
  if i > 1 then action = keep_level(index, member, f[11], level_need(now, lease, pe, win, true), w, lease) end
  redis.call('HSET', key, unpack(w))
  expire_level(key, action)
  if i == 1 then out[2], out[3] = a_t, a_n end
end
return out
`;
