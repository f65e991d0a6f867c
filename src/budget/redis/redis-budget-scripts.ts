import { createHash } from 'node:crypto';
import { PRELUDE } from './redis-lua-prelude.js';

/**
 * The Lua run inside Redis for each budget operation. One script an operation makes each one
 * atomic across every process sharing the server: no other command runs while a script does, so
 * every level of a call (tenant, user, session) is checked and reserved in one step.
 *
 * Amounts are integers: tokens, and cost in nano-USD (1e-9), so the running sums Redis keeps
 * never drift the way adding and subtracting float dollars does. Numbers go to redis.call as Lua
 * numbers (printed "%.17g": digits only below 1e17); no script uses HINCRBY.
 *
 * Keys are those of redis-budget-keys.ts, all in the tenant's hash slot. A level hash (the
 * tenant's ledger, a user's "u:<id>", a session's "s:<id>") has: rt/rn held by live
 * reservations, st/sn spent all time, wm/wt/wn the window length its sums cover and the spend
 * inside it, ps/pt/pn the period start its sums cover and the spend since, xp when a user's or
 * session's hash expires (0: never), x:<T|N>:<limit>:<threshold> threshold markers, and on the
 * ledger lim (the tenant's limit last seen, as JSON, for reports).
 *
 * No key has a TTL (see keep_level in the prelude): a user's or session's hash past its end of
 * life is deleted by the settle script's sweep.
 *
 * Every script takes ARGV[1] = clock shift in ms (0 but in tests; see the prelude).
 */

/**
 * KEYS: leases, log, levels, data id (the leases key again when not checked), then the level
 * hashes: the tenant's ledger first, then the user's and the session's.
 * ARGV: shift, tokens, nano, leaseMs, id, give up by (server ms, or ''), data id ('' unchecked),
 * limit JSON, windowMs or '', period starts "b0,b1,b2,b3" or '', then per level maxTokens,
 * maxNano (either '') and its member ('' for the tenant).
 * Returns {1, spentT, spentN, heldT, heldN} (the tenant's, before this reservation);
 * {0, level, limitName, spentT, spentN, heldT, heldN} (the refusing level, 1-based); {2} the id is
 * taken; {3} past the give-up time (nothing reserved); {4, data id found} the data is not the one
 * the store knows (nothing reserved).
 */
export const RESERVE_LUA = `${PRELUDE}
local leases, log, index = KEYS[1], KEYS[2], KEYS[3]
local now = now_ms()
if ARGV[6] ~= '' and now > tonumber(ARGV[6]) then return {3} end
if ARGV[7] ~= '' then
  local sid = redis.call('GET', KEYS[4])
  if sid ~= ARGV[7] then return {4, sid or ''} end
end
local base = string.sub(leases, 1, -7)
local amt_t, amt_n, lease = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local win = ARGV[9]
local ps, pe = period_of(now, ARGV[10])
local levels = #KEYS - 4
local tf = redis.call('HMGET', KEYS[5], 'st', 'sn', 'rt', 'rn', 'wm', 'wt', 'wn', 'ps', 'pt', 'pn', 'lim')
local exp_t, exp_n = expire_leases(base, leases, now)
local held_t, held_n = num(tf[3]) - exp_t, num(tf[4]) - exp_n
local function give_back()
  if exp_t ~= 0 or exp_n ~= 0 then redis.call('HSET', KEYS[5], 'rt', floor0(held_t), 'rn', floor0(held_n)) end
end
local sp_t, sp_n
if win ~= '' then
  sp_t, sp_n = roll_window(base, KEYS[5], log, win, tf[5], tf[6], tf[7], now)
elseif ps then
  if tonumber(tf[8]) == ps then sp_t, sp_n = num(tf[9]), num(tf[10]) else sp_t, sp_n = 0, 0 end
else
  sp_t, sp_n = num(tf[1]), num(tf[2])
end
local refused = over(ARGV[11], ARGV[12], sp_t + held_t + amt_t, sp_n + held_n + amt_n)
if refused then
  give_back()
  return {0, 1, refused, sp_t, sp_n, held_t, held_n}
end
local seen = {}
for i = 2, levels do
  local a = 11 + (i - 1) * 3
  local f = redis.call('HMGET', KEYS[4 + i], 'rt', 'rn', 'st', 'sn', 'wm', 'wt', 'wn', 'ps', 'pt', 'pn', 'xp')
  local h_t, h_n = num(f[1]), num(f[2])
  local s_t, s_n, rewin = 0, 0, false
  if win ~= '' then
    s_t, s_n, rewin = level_window(log, ARGV[a + 2], f[5], f[6], f[7], win, now)
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
redis.call('HSET', KEYS[5], unpack(w))
for i = 2, levels do
  local v = seen[i]
  local f = v[1]
  local lw = {'rt', v[2] + amt_t, 'rn', v[3] + amt_n}
  if v[6] then lw[#lw + 1] = 'wm'; lw[#lw + 1] = win; lw[#lw + 1] = 'wt'; lw[#lw + 1] = v[4]; lw[#lw + 1] = 'wn'; lw[#lw + 1] = v[5] end
  if ps and tonumber(f[8]) ~= ps then lw[#lw + 1] = 'ps'; lw[#lw + 1] = ps; lw[#lw + 1] = 'pt'; lw[#lw + 1] = 0; lw[#lw + 1] = 'pn'; lw[#lw + 1] = 0 end
  local action = keep_level(index, ARGV[11 + (i - 1) * 3 + 2], f[11], level_need(now, lease, pe, win, false), lw, lease)
  redis.call('HSET', KEYS[4 + i], unpack(lw))
  expire_level(KEYS[4 + i], action)
end
return {1, sp_t, sp_n, held_t, held_n}
`;

/**
 * KEYS: leases, log, settled, levels, then the level hashes (the tenant's ledger first). A
 * reservation settles at the levels its id names.
 * ARGV: shift, id, tokens, nano, markerMs, leaseMs, windowMs or '', period starts or '',
 * thresholds "0.8,0.95" or '', then per level maxTokens, maxNano and member.
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
local win, thresholds = ARGV[7], ARGV[9]
local ps, pe = period_of(now, ARGV[8])
local out = {1, 0, 0}
if win ~= '' then
  local u, s = '', ''
  for i = 2, #KEYS - 4 do
    local m = ARGV[10 + (i - 1) * 3 + 2]
    if string.sub(m, 1, 1) == 'u' then u = string.sub(m, 3) else s = string.sub(m, 3) end
  end
  redis.call('ZADD', log, now, id .. '|' .. ARGV[3] .. '|' .. ARGV[4] .. '|' .. u .. '|' .. s)
end
for i = 1, #KEYS - 4 do
  local key, a = KEYS[4 + i], 10 + (i - 1) * 3
  local member = ARGV[a + 2]
  local f = redis.call('HMGET', key, 'rt', 'rn', 'st', 'sn', 'wm', 'wt', 'wn', 'ps', 'pt', 'pn', 'xp')
  local b_t, b_n
  if win ~= '' then
    if i == 1 then
      -- This settle's own log entry is in already; the roll never drops it (it is from now).
      b_t, b_n = roll_window(base, key, log, win, f[5], f[6], f[7], now)
      if f[5] ~= win then b_t, b_n = b_t - tok, b_n - nano end
    else
      b_t, b_n = level_window(log, member, f[5], f[6], f[7], win, now)
      if f[5] ~= win then b_t, b_n = b_t - tok, b_n - nano end
    end
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
  if thresholds ~= '' then
    for _, code in ipairs({'T', 'N'}) do
      local limit = ARGV[a + (code == 'T' and 0 or 1)]
      local before, after = b_t, a_t
      if code == 'N' then before, after = b_n, a_n end
      if limit ~= '' and tonumber(limit) > 0 then
        for t in string.gmatch(thresholds, '[^,]+') do
          local at = tonumber(t) * tonumber(limit)
          if before < at and at <= after then
            local mk = 'x:' .. code .. ':' .. limit .. ':' .. t
            local m = tonumber(redis.call('HGET', key, mk))
            local again = m == nil
            if m ~= nil then
              if ps then again = m ~= ps elseif win ~= '' then again = now - m >= tonumber(win) end
            end
            if again then
              w[#w + 1] = mk; w[#w + 1] = ps or ((win ~= '' and now) or 0)
              out[#out + 1] = i; out[#out + 1] = code; out[#out + 1] = t; out[#out + 1] = after; out[#out + 1] = tonumber(limit)
            end
          end
        end
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

/** KEYS: leases, then the level hashes the id names (the tenant's ledger first). ARGV: shift, id. Returns 1 when it freed a reservation. */
export const RELEASE_LUA = `${PRELUDE}
if redis.call('ZREM', KEYS[1], ARGV[2]) == 0 then return 0 end
local t, n = parse_id(ARGV[2])
if not t then return 1 end
for i = 2, #KEYS do unhold(KEYS[i], t, n) end
return 1
`;

/**
 * KEYS: leases, log, settled, ledger. ARGV: shift, windowMs|''|'*' (the window of the limit last
 * recorded). Returns {spentT, spentN, heldT, heldN, reservations, limit, totalT, totalN} for the
 * tenant level; leases that ended are dropped first, and settled markers whose time has come are
 * forgotten. A window other than the one the limit rolls sums the log.
 */
export const USAGE_LUA = `${PRELUDE}
local leases, log, settled, ledger = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local win = ARGV[2]
local now = now_ms()
local base = string.sub(leases, 1, -7)
redis.call('ZREMRANGEBYSCORE', settled, '-inf', now)
local f = redis.call('HMGET', ledger, 'st', 'sn', 'rt', 'rn', 'lim', 'wm', 'wt', 'wn')
local exp_t, exp_n = expire_leases(base, leases, now)
local res_t, res_n = floor0(num(f[3]) - exp_t), floor0(num(f[4]) - exp_n)
if exp_t ~= 0 or exp_n ~= 0 then redis.call('HSET', ledger, 'rt', res_t, 'rn', res_n) end
if win == '*' then win = f[6] or '' end
local total_t, total_n = num(f[1]), num(f[2])
local spent_t, spent_n = total_t, total_n
if win ~= '' and f[6] then
  if f[6] == win then
    spent_t, spent_n = roll_window(base, ledger, log, win, f[6], f[7], f[8], now)
  else
    spent_t, spent_n = sum_log_after(log, now - tonumber(win), nil)
  end
end
return {spent_t, spent_n, res_t, res_n, redis.call('ZCARD', leases), f[5] or '', total_t, total_n}
`;

/**
 * Read-only: what \`symfonic budget\` shows, and nothing written (leases that ended and spend that
 * rolled out are discounted, not removed). KEYS: leases, log, ledger, levels. ARGV: shift,
 * windowMs or '', period starts or ''. Returns {now, live reservations, limit JSON, then per level
 * (the tenant's first, member ''): member, spentT, spentN, heldT, heldN, totalT, totalN}.
 */
export const REPORT_LUA = `${PRELUDE}
local leases, log, ledger, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now = now_ms()
local win = ARGV[2]
local ps = period_of(now, ARGV[3])
local base = string.sub(leases, 1, -7)
local ended = {}
local function add(map, k, t, n)
  local v = map[k] or {0, 0}
  map[k] = {v[1] + t, v[2] + n}
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', leases, '-inf', now)) do
  local t, n, u, s = parse_id(id)
  if t then
    add(ended, '', t, n)
    if u ~= '' then add(ended, 'u:' .. u, t, n) end
    if s ~= '' then add(ended, 's:' .. s, t, n) end
  end
end
local old = {}
if win ~= '' then
  for _, e in ipairs(redis.call('ZRANGEBYSCORE', log, '-inf', now - tonumber(win))) do
    local t, n, u, s = parse_log(e)
    add(old, '', t, n)
    if u ~= '' then add(old, 'u:' .. u, t, n) end
    if s ~= '' then add(old, 's:' .. s, t, n) end
  end
end
local after_now = '(' .. string.format('%.0f', now)
local out = {now, redis.call('ZCOUNT', leases, after_now, '+inf'), redis.call('HGET', ledger, 'lim') or ''}
local function level(key, member)
  local f = redis.call('HMGET', key, 'rt', 'rn', 'st', 'sn', 'wm', 'wt', 'wn', 'ps', 'pt', 'pn')
  if member ~= '' and not f[1] and not f[3] then return end
  local e, o = ended[member] or {0, 0}, old[member] or {0, 0}
  local s_t, s_n = num(f[3]), num(f[4])
  if win ~= '' then
    if f[5] == win then
      s_t, s_n = floor0(num(f[6]) - o[1]), floor0(num(f[7]) - o[2])
    else
      s_t, s_n = sum_log_after(log, now - tonumber(win), member ~= '' and member or nil)
    end
  elseif ps then
    if tonumber(f[8]) == ps then s_t, s_n = num(f[9]), num(f[10]) else s_t, s_n = 0, 0 end
  end
  for _, v in ipairs({member, s_t, s_n, floor0(num(f[1]) - e[1]), floor0(num(f[2]) - e[2]), num(f[3]), num(f[4])}) do out[#out + 1] = v end
end
level(ledger, '')
for _, m in ipairs(redis.call('ZRANGEBYSCORE', index, after_now, '+inf', 'LIMIT', 0, 1000)) do level(base .. m, m) end
return out
`;

/**
 * KEYS: leases, levels. ARGV: shift, leaseMs, then the ids of calls still running. Each live
 * lease is moved to now + leaseMs, and the user and session hashes it holds at are kept at least
 * that long. Returns the ids that held no lease any more (it had lapsed: the store was out of
 * reach or stalled longer than leaseMs).
 */
export const RENEW_LUA = `${PRELUDE}
local leases, index = KEYS[1], KEYS[2]
local now = now_ms()
local lease = tonumber(ARGV[2])
local base = string.sub(leases, 1, -7)
local lapsed, kept = {}, {}
for i = 3, #ARGV do
  local id = ARGV[i]
  if redis.call('ZADD', leases, 'XX', 'CH', now + lease, id) == 0 and not redis.call('ZSCORE', leases, id) then
    lapsed[#lapsed + 1] = id
  else
    local _, _, u, s = parse_id(id)
    for _, m in ipairs({u ~= '' and ('u:' .. u) or false, s ~= '' and ('s:' .. s) or false}) do
      if m and not kept[m] then
        kept[m] = true
        local xp = redis.call('HGET', base .. m, 'xp')
        if xp and xp ~= '0' and tonumber(xp) < now + lease then
          redis.call('HSET', base .. m, 'xp', now + 2 * lease)
          redis.call('ZADD', index, now + 2 * lease, m)
        end
      end
    end
  end
end
return lapsed
`;

export interface BudgetScript {
  readonly name: 'reserve' | 'settle' | 'release' | 'usage' | 'report' | 'renew';
  readonly lua: string;
  /** What EVALSHA names it by; Redis computes the same SHA-1 when it loads the text. */
  readonly sha: string;
}

function script(name: BudgetScript['name'], lua: string): BudgetScript {
  return Object.freeze({ name, lua, sha: createHash('sha1').update(lua).digest('hex') });
}

export const SCRIPTS = Object.freeze({
  reserve: script('reserve', RESERVE_LUA),
  settle: script('settle', SETTLE_LUA),
  release: script('release', RELEASE_LUA),
  usage: script('usage', USAGE_LUA),
  report: script('report', REPORT_LUA),
  renew: script('renew', RENEW_LUA),
});
