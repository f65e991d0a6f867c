import { PRELUDE } from './redis-lua-prelude.js';

/**
 * The reserve script: every level of a call (the tenant's ledger first, then each level inside it
 * the call is held at, as many as the call has) checked and reserved in one step, each level's
 * hash read once and written once. The read of the ledger also brings what used to cost calls of
 * their own: the data id the ledger was written under (did; the data id key is read only when the
 * ledger does not carry the store's: a new tenant, older data, or data lost), and a time no lease
 * of the tenant ends before (le; the leases set is scanned for ended leases only once it passed).
 * Field layout: see redis-budget-scripts.ts.
 *
 * KEYS: leases, log, levels, data id (the leases key again when not checked), then the level
 * hashes: the tenant's ledger first, then one per level inside it.
 * ARGV: shift, tokens, nano, leaseMs, id, give up by (server ms, or ''), data id ('' unchecked),
 * limit JSON, windowMs or '', period starts "b0,b1,b2,b3" or '', level key prefixes "u,s", then
 * per level maxTokens, maxNano (either '') and its member ('' for the tenant).
 * Returns {1, spentT, spentN, heldT, heldN} (the tenant's, before this reservation);
 * {0, level, limitName, spentT, spentN, heldT, heldN} (the refusing level, 1-based); {2} the id is
 * taken; {3} past the give-up time (nothing reserved); {4, data id found} the data is not the one
 * the store knows (nothing reserved).
 */
export const RESERVE_LUA = `${PRELUDE}
local leases, log, index = KEYS[1], KEYS[2], KEYS[3]
local now = now_ms()
if ARGV[6] ~= '' and now > tonumber(ARGV[6]) then return {3} end
local base = string.sub(leases, 1, -7)
local amt_t, amt_n, lease = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local did, win = ARGV[7], ARGV[9]
local ps, pe = period_of(now, ARGV[10])
-- Read only when a window rolls or leases ended: the common call never parses them.
local P = win ~= '' and prefixes_of(ARGV[11]) or nil
local levels = #KEYS - 4
local ledger = KEYS[5]
local tf = redis.call('HMGET', ledger, 'st', 'sn', 'rt', 'rn', 'wm', 'wt', 'wn', 'ps', 'pt', 'pn', 'lim', 'did', 'le')
if did ~= '' and tf[12] ~= did then
  local sid = redis.call('GET', KEYS[4])
  if sid ~= did then return {4, sid or ''} end
end
local exp_t, exp_n, le = 0, 0, tonumber(tf[13])
if le == nil or now >= le then
  P = P or prefixes_of(ARGV[11])
  exp_t, exp_n = expire_leases(base, leases, now, P)
  local first = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
  le = tonumber(first[2])
end
if le == nil or le > now + lease then le = now + lease end
local held_t, held_n = num(tf[3]) - exp_t, num(tf[4]) - exp_n
local function give_back()
  if exp_t ~= 0 or exp_n ~= 0 then redis.call('HSET', ledger, 'rt', floor0(held_t), 'rn', floor0(held_n), 'le', le) end
end
local sp_t, sp_n
if win ~= '' then
  sp_t, sp_n = roll_window(base, ledger, log, win, tf[5], tf[6], tf[7], now, P)
elseif ps then
  if tonumber(tf[8]) == ps then sp_t, sp_n = num(tf[9]), num(tf[10]) else sp_t, sp_n = 0, 0 end
else
  sp_t, sp_n = num(tf[1]), num(tf[2])
end
local refused = over(ARGV[12], ARGV[13], sp_t + held_t + amt_t, sp_n + held_n + amt_n)
if refused then
  give_back()
  return {0, 1, refused, sp_t, sp_n, held_t, held_n}
end
local seen = {}
for i = 2, levels do
  local a = 12 + (i - 1) * 3
  local f = redis.call('HMGET', KEYS[4 + i], 'rt', 'rn', 'st', 'sn', 'wm', 'wt', 'wn', 'ps', 'pt', 'pn', 'xp')
  local h_t, h_n = num(f[1]), num(f[2])
  local s_t, s_n, rewin = 0, 0, false
  if win ~= '' then
    s_t, s_n, rewin = level_window(log, ARGV[a + 2], f[5], f[6], f[7], win, now, P)
  elseif ps then
    if tonumber(f[8]) == ps then s_t, s_n = num(f[9]), num(f[10]) end
  else
    s_t, s_n = num(f[3]), num(f[4])
  end
  local r = over(ARGV[a], ARGV[a + 1], s_t + h_t + amt_t, s_n + h_n + amt_n)
  if r then
    give_back()
    return {0, i, r, s_t, s_n, h_t, h_n}
  end
  seen[i] = {f, h_t, h_n, s_t, s_n, rewin}
end
if redis.call('ZADD', leases, 'NX', now + lease, ARGV[5]) == 0 then
  give_back()
  return {2}
end
local w = {'rt', held_t + amt_t, 'rn', held_n + amt_n}
if ps and tonumber(tf[8]) ~= ps then w[#w + 1] = 'ps'; w[#w + 1] = ps; w[#w + 1] = 'pt'; w[#w + 1] = 0; w[#w + 1] = 'pn'; w[#w + 1] = 0 end
if tf[11] ~= ARGV[8] then w[#w + 1] = 'lim'; w[#w + 1] = ARGV[8] end
if did ~= '' and tf[12] ~= did then w[#w + 1] = 'did'; w[#w + 1] = did end
if tonumber(tf[13]) ~= le then w[#w + 1] = 'le'; w[#w + 1] = le end
redis.call('HSET', ledger, unpack(w))
for i = 2, levels do
  local v = seen[i]
  local f = v[1]
  local lw = {'rt', v[2] + amt_t, 'rn', v[3] + amt_n}
  if v[6] then lw[#lw + 1] = 'wm'; lw[#lw + 1] = win; lw[#lw + 1] = 'wt'; lw[#lw + 1] = v[4]; lw[#lw + 1] = 'wn'; lw[#lw + 1] = v[5] end
  if ps and tonumber(f[8]) ~= ps then lw[#lw + 1] = 'ps'; lw[#lw + 1] = ps; lw[#lw + 1] = 'pt'; lw[#lw + 1] = 0; lw[#lw + 1] = 'pn'; lw[#lw + 1] = 0 end
  local action = keep_level(index, ARGV[12 + (i - 1) * 3 + 2], f[11], level_need(now, lease, pe, win, false), lw, lease)
  redis.call('HSET', KEYS[4 + i], unpack(lw))
  expire_level(KEYS[4 + i], action)
end
return {1, sp_t, sp_n, held_t, held_n}
`;
