import { DATA_ID_SUFFIX } from './redis-budget-keys.js';
import { PRELUDE, tenantKeysLua } from './redis-lua-prelude.js';

/**
 * The reserve script: every level of a call (the tenant's ledger first, then each level inside it
 * the call is held at, as many as the call has) checked and reserved in one step, each level's
 * hash read once and written once, and only the fields the limit's kind of count needs read. The
 * read of the ledger also brings what used to cost calls of their own: the data id the ledger was
 * written under (did; the data id key is read only when the ledger does not carry the store's: a
 * new tenant, older data, or data lost), and a time no lease of the tenant ends before (le; the
 * leases set is scanned for ended leases only once it passed). Field layout: see
 * redis-budget-scripts.ts; the call's arguments are packed (see redis-script-calls.ts): each one
 * costs the client and the server more than the few characters Lua splits them by.
 *
 * KEYS: the tenant's ledger (every other key is named from it: the same hash tag).
 * ARGV: shift, id (it carries the amount: "r<unique>:<tokens>:<nano>..."), "leaseMs,give up by
 * (server ms, or ''),data id ('' unchecked)", count (see count_of), levels (see levels_of),
 * limit JSON.
 * Returns {1, spentT, spentN, heldT, heldN} (the tenant's, before this reservation);
 * {0, level, limitName, spentT, spentN, heldT, heldN} (the refusing level, 1-based); {2} the id is
 * taken; {3} past the give-up time (nothing reserved); {4, data id found} the data is not the one
 * the store knows (nothing reserved).
 */
export const RESERVE_LUA = `${PRELUDE}
${tenantKeysLua('leases', 'log', 'levels')}
local now = now_ms()
local lease, give_up, did = string.match(ARGV[3], '^(%d+),([^,]*),(.*)$')
if give_up ~= '' and now > tonumber(give_up) then return {3} end
lease = tonumber(lease)
local id = ARGV[2]
local amt_t, amt_n = parse_id(id)
local win, ps, pe = count_of(now, ARGV[4])
local L = levels_of(ARGV[5])
-- Read only when a window rolls or leases ended: the common call never parses them.
local P = win ~= '' and prefixes_of(PREFIXES) or nil
local tf, x = read_level(ledger, win, ps, 'lim', 'did', 'le')
if did ~= '' and tf[x + 1] ~= did then
  local sid = redis.call('GET', string.match(base, '^[^{]*') .. '${DATA_ID_SUFFIX}')
  if sid ~= did then return {4, sid or ''} end
end
local exp_t, exp_n, le = 0, 0, tonumber(tf[x + 2])
if le == nil or now >= le then
  P = P or prefixes_of(PREFIXES)
  exp_t, exp_n = expire_leases(base, leases, now, P)
  local first = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
  le = tonumber(first[2])
end
if le == nil or le > now + lease then le = now + lease end
local held_t, held_n = num(tf[1]) - exp_t, num(tf[2]) - exp_n
local function give_back()
  if exp_t ~= 0 or exp_n ~= 0 then redis.call('HSET', ledger, 'rt', floor0(held_t), 'rn', floor0(held_n), 'le', le) end
end
local sp_t, sp_n
if win ~= '' then
  sp_t, sp_n = roll_window(base, ledger, log, win, tf[5], tf[6], tf[7], now, P)
else
  sp_t, sp_n = counted(tf, ps)
end
local refused = over(L[1], L[2], sp_t + held_t + amt_t, sp_n + held_n + amt_n)
if refused then
  give_back()
  return {0, 1, refused, sp_t, sp_n, held_t, held_n}
end
local seen = {}
for i = 2, #L / 3 do
  local a = (i - 1) * 3
  local key = base .. L[a + 3]
  local f, fx = read_level(key, win, ps, 'xp')
  local h_t, h_n = num(f[1]), num(f[2])
  local s_t, s_n, rewin = 0, 0, false
  if win ~= '' then
    s_t, s_n, rewin = level_window(log, L[a + 3], f[5], f[6], f[7], win, now, P)
  else
    s_t, s_n = counted(f, ps)
  end
  local r = over(L[a + 1], L[a + 2], s_t + h_t + amt_t, s_n + h_n + amt_n)
  if r then
    give_back()
    return {0, i, r, s_t, s_n, h_t, h_n}
  end
  seen[i] = {f, h_t, h_n, s_t, s_n, rewin, key, f[fx]}
end
if redis.call('ZADD', leases, 'NX', now + lease, id) == 0 then
  give_back()
  return {2}
end
local w = {'rt', held_t + amt_t, 'rn', held_n + amt_n}
if ps and tonumber(tf[5]) ~= ps then w[#w + 1] = 'ps'; w[#w + 1] = ps; w[#w + 1] = 'pt'; w[#w + 1] = 0; w[#w + 1] = 'pn'; w[#w + 1] = 0 end
if tf[x] ~= ARGV[6] then w[#w + 1] = 'lim'; w[#w + 1] = ARGV[6] end
if did ~= '' and tf[x + 1] ~= did then w[#w + 1] = 'did'; w[#w + 1] = did end
if tonumber(tf[x + 2]) ~= le then w[#w + 1] = 'le'; w[#w + 1] = le end
redis.call('HSET', ledger, unpack(w))
for i = 2, #L / 3 do
  local v = seen[i]
  local f = v[1]
  local lw = {'rt', v[2] + amt_t, 'rn', v[3] + amt_n}
  if v[6] then lw[#lw + 1] = 'wm'; lw[#lw + 1] = win; lw[#lw + 1] = 'wt'; lw[#lw + 1] = v[4]; lw[#lw + 1] = 'wn'; lw[#lw + 1] = v[5] end
  if ps and tonumber(f[5]) ~= ps then lw[#lw + 1] = 'ps'; lw[#lw + 1] = ps; lw[#lw + 1] = 'pt'; lw[#lw + 1] = 0; lw[#lw + 1] = 'pn'; lw[#lw + 1] = 0 end
  local action = keep_level(index, L[i * 3], v[8], level_need(now, lease, pe, win, false), lw, lease)
  redis.call('HSET', v[7], unpack(lw))
  expire_level(v[7], action)
end
return {1, sp_t, sp_n, held_t, held_n}
`;
