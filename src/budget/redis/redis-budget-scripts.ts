import { createHash } from 'node:crypto';
import { PRELUDE } from './redis-lua-prelude.js';
import { RESERVE_LUA } from './redis-reserve-script.js';
import { SETTLE_LUA } from './redis-settle-script.js';

/**
 * The Lua run inside Redis for each budget operation. One script an operation makes each one
 * atomic across every process sharing the server: no other command runs while a script does, so
 * every level of a call (the tenant, and each level inside it: INNER_LEVELS) is checked and
 * reserved in one step. The scripts know no level by name: reserve and settle take the levels'
 * caps and members packed in one argument (levels_of) and name their hashes from the ledger's
 * key; the others take the level hashes as KEYS. The levels' key prefixes ("u,s"), to read
 * reservation ids and log entries by, are in the prelude (PREFIXES) or an argument.
 *
 * Amounts are integers: tokens, and cost in nano-USD (1e-9), so the running sums Redis keeps
 * never drift the way adding and subtracting float dollars does. Numbers go to redis.call as Lua
 * numbers (printed "%.17g": digits only below 1e17); no script uses HINCRBY.
 *
 * Keys are those of redis-budget-keys.ts, all in the tenant's hash slot. A level hash (the
 * tenant's ledger, a user's "u:<id>", a session's "s:<id>", ...) has: rt/rn held by live
 * reservations, st/sn spent all time, wm/wt/wn the window length its sums cover and the spend
 * inside it, ps/pt/pn the period start its sums cover and the spend since, xp when a user's or
 * session's hash expires (0: never), x:<T|N>:<limit>:<threshold> threshold markers, and on the
 * ledger lim (the tenant's limit last seen, as JSON, for reports), did (the data id it was last
 * reserved under) and le (a time no lease of the tenant ends before).
 *
 * No key has a TTL (see keep_level in the prelude): a user's or session's hash past its end of
 * life is deleted by the settle script's sweep.
 *
 * Every script takes ARGV[1] = clock shift in ms (0 but in tests; see the prelude).
 */

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
 * recorded), level key prefixes. Returns {spentT, spentN, heldT, heldN, reservations, limit, totalT, totalN} for the
 * tenant level; leases that ended are dropped first, and settled markers whose time has come are
 * forgotten. A window other than the one the limit rolls sums the log.
 */
export const USAGE_LUA = `${PRELUDE}
local leases, log, settled, ledger = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local win = ARGV[2]
local P = prefixes_of(ARGV[3])
local now = now_ms()
local base = string.sub(leases, 1, -7)
redis.call('ZREMRANGEBYSCORE', settled, '-inf', now)
local f = redis.call('HMGET', ledger, 'st', 'sn', 'rt', 'rn', 'lim', 'wm', 'wt', 'wn')
local exp_t, exp_n = expire_leases(base, leases, now, P)
local res_t, res_n = floor0(num(f[3]) - exp_t), floor0(num(f[4]) - exp_n)
if exp_t ~= 0 or exp_n ~= 0 then redis.call('HSET', ledger, 'rt', res_t, 'rn', res_n) end
if win == '*' then win = f[6] or '' end
local total_t, total_n = num(f[1]), num(f[2])
local spent_t, spent_n = total_t, total_n
if win ~= '' and f[6] then
  if f[6] == win then
    spent_t, spent_n = roll_window(base, ledger, log, win, f[6], f[7], f[8], now, P)
  else
    spent_t, spent_n = sum_log_after(log, now - tonumber(win), nil, P)
  end
end
return {spent_t, spent_n, res_t, res_n, redis.call('ZCARD', leases), f[5] or '', total_t, total_n}
`;

/**
 * Read-only: what \`symfonic budget\` shows, and nothing written (leases that ended and spend that
 * rolled out are discounted, not removed). KEYS: leases, log, ledger, levels. ARGV: shift,
 * windowMs or '', period starts or '', level key prefixes. Returns {now, live reservations, limit JSON, then per level
 * (the tenant's first, member ''): member, spentT, spentN, heldT, heldN, totalT, totalN}.
 */
export const REPORT_LUA = `${PRELUDE}
local leases, log, ledger, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now = now_ms()
local win = ARGV[2]
local ps = period_of(now, ARGV[3])
local P = prefixes_of(ARGV[4])
local base = string.sub(leases, 1, -7)
local ended = {}
local function add(map, ids, t, n)
  for _, k in ipairs({'', unpack(members_of(P, ids))}) do
    local v = map[k] or {0, 0}
    map[k] = {v[1] + t, v[2] + n}
  end
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', leases, '-inf', now)) do
  local t, n, rest = parse_id(id)
  if t then add(ended, ids_of(rest), t, n) end
end
local old = {}
if win ~= '' then
  for _, e in ipairs(redis.call('ZRANGEBYSCORE', log, '-inf', now - tonumber(win))) do
    local t, n, ids = parse_log(e, P)
    add(old, ids, t, n)
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
      s_t, s_n = sum_log_after(log, now - tonumber(win), member ~= '' and member or nil, P)
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
 * KEYS: leases, levels. ARGV: shift, leaseMs, level key prefixes, then the ids of calls still
 * running. Each live lease is moved to now + leaseMs, and the hashes of the levels inside the
 * tenant it holds at are kept at least that long. Returns the ids that held no lease any more (it had lapsed: the store was out of
 * reach or stalled longer than leaseMs).
 */
export const RENEW_LUA = `${PRELUDE}
local leases, index = KEYS[1], KEYS[2]
local now = now_ms()
local lease = tonumber(ARGV[2])
local P = prefixes_of(ARGV[3])
local base = string.sub(leases, 1, -7)
local lapsed, kept = {}, {}
for i = 4, #ARGV do
  local id = ARGV[i]
  if redis.call('ZADD', leases, 'XX', 'CH', now + lease, id) == 0 and not redis.call('ZSCORE', leases, id) then
    lapsed[#lapsed + 1] = id
  else
    local _, _, rest = parse_id(id)
    for _, m in ipairs(members_of(P, ids_of(rest))) do
      if not kept[m] then
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
