import { PRELUDE, tenantKeysLua } from './redis-lua-prelude.js';

/**
 * The settle script: the reservation freed and the spend charged at every level it is held at
 * (the tenant's ledger first, then each level inside it, as many as it has), each level's hash
 * read once, with the threshold markers the spend may cross in the same read, and written once;
 * only the fields of the count the limit keeps are read. Field layout: see
 * redis-budget-scripts.ts; the arguments are packed as the reserve script's are.
 *
 * KEYS: the tenant's ledger (every other key is named from it). A reservation settles at the
 * levels its id names.
 * ARGV: shift, id, "tokens,nano,markerMs,leaseMs", count (see count_of), levels (see levels_of),
 * thresholds "0.8,0.95" or '', the log entry's level ids ("|<id>|<id>", for a window only).
 * Returns {0} when the id had settled before (a retry: nothing charged), else {1, tenant spent
 * tokens, tenant spent nano, then per crossing: level (1-based), 'T' or 'N', threshold (text),
 * spent, limit}.
 */
export const SETTLE_LUA = `${PRELUDE}
${tenantKeysLua('leases', 'log', 'settled', 'levels')}
local id = ARGV[2]
local now = now_ms()
local tok_s, nano_s, marker_ms, lease = string.match(ARGV[3], '^(%d+),(%d+),(%d+),(%d+)$')
if redis.call('ZADD', settled, 'NX', now + tonumber(marker_ms), id) == 0 then return {0} end
if now % 16 == 0 then
  redis.call('ZREMRANGEBYSCORE', settled, '-inf', now)
  sweep_levels(base, index, now)
end
local tok, nano = tonumber(tok_s), tonumber(nano_s)
lease = tonumber(lease)
local hold_t, hold_n = 0, 0
if redis.call('ZREM', leases, id) == 1 then hold_t, hold_n = parse_id(id) end
local win, ps, pe = count_of(now, ARGV[4])
local L = levels_of(ARGV[5])
local P = win ~= '' and prefixes_of(PREFIXES) or nil
local TH = nil
if ARGV[6] ~= '' then
  TH = {}
  for t in string.gmatch(ARGV[6], '[^,]+') do TH[#TH + 1] = t end
end
if win ~= '' then redis.call('ZADD', log, now, id .. '|' .. tok_s .. '|' .. nano_s .. ARGV[7]) end
local out = {1, 0, 0}
local NONE = {}
-- The markers of every threshold a level's limits have: read with its sums.
local function markers(a)
  local marks, ask = {}, {'xp'}
  for c = 1, 2 do
    local code, limit = c == 1 and 'T' or 'N', L[a + c]
    if limit ~= '' and tonumber(limit) > 0 then
      for _, t in ipairs(TH) do
        marks[#marks + 1] = {code, limit, t}
        ask[#ask + 1] = 'x:' .. code .. ':' .. limit .. ':' .. t
      end
    end
  end
  return marks, ask
end
for i = 1, #L / 3 do
  local a = (i - 1) * 3
  local member = L[a + 3]
  local key = i == 1 and ledger or base .. member
  local f, x, marks, ask
  if TH then
    marks, ask = markers(a)
    f, x = read_level(key, win, ps, unpack(ask))
  else
    marks = NONE
    f, x = read_level(key, win, ps, 'xp')
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
  else
    b_t, b_n = counted(f, ps)
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
      local m = tonumber(f[x + k])
      local again = m == nil
      if m ~= nil then
        if ps then again = m ~= ps elseif win ~= '' then again = now - m >= tonumber(win) end
      end
      if again then
        w[#w + 1] = ask[1 + k]; w[#w + 1] = ps or ((win ~= '' and now) or 0)
        out[#out + 1] = i; out[#out + 1] = code; out[#out + 1] = t; out[#out + 1] = after; out[#out + 1] = tonumber(limit)
      end
    end
  end
  local action = nil
  if i > 1 then action = keep_level(index, member, f[x], level_need(now, lease, pe, win, true), w, lease) end
  redis.call('HSET', key, unpack(w))
  expire_level(key, action)
  if i == 1 then out[2], out[3] = a_t, a_n end
end
return out
`;
