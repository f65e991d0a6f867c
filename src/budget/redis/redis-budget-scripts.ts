import { createHash } from 'node:crypto';

/**
 * The Lua run inside Redis for each budget operation. One script an operation makes each one
 * atomic across every process sharing the server: no other command runs while a script does.
 *
 * Amounts are integers: tokens, and cost in nano-USD (1e-9), so the running sums Redis keeps
 * never drift the way adding and subtracting float dollars does.
 *
 * Every time is the server's (`TIME`), one clock for every process of a fleet; see
 * docs/design.md, "The Redis budget store".
 *
 * Keys (see redis-budget-keys.ts): KEYS[1] ledger hash, KEYS[2] leases zset (a live reservation
 * "r<seq>:<tokens>:<nano>" -> when its lease ends; the member is the reservation id, so it carries
 * what it holds), KEYS[3] settled-spend log zset, KEYS[4] settled zset (id -> when its marker may
 * be forgotten). Ledger fields: st/sn spent (all time), wm window the log sums cover, wt/wn spent
 * inside it, rt/rn reserved, seq reservation counter, lim the last limit seen
 * ("maxTokens:maxNano:windowMs", '' for an absent part).
 *
 * Cost: each redis.call costs the server's single thread about half a microsecond on top of the
 * command, and every process waits on that thread, so the common path is short: reserve is TIME,
 * one HMGET, one ZRANGEBYSCORE (expired leases, usually none), one HSET and one ZADD; settle is
 * TIME, a trim and a ZADD NX of the settled zset, one ZREM, one HMGET and one HSET. Numbers go to
 * redis.call as Lua numbers: Redis prints them with "%.17g", digits only below 1e17 (integers past
 * 2^53 are not exact in Lua anyway), and no HINCRBY ever reads a field written that way.
 */

const PRELUDE = `
local function now_ms()
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000)
end

-- What a reservation id holds: the script made it "r<seq>:<tokens>:<nano>".
local function held(member)
  local t, n = string.match(member, ':(%d+):(%d+)$')
  return tonumber(t), tonumber(n)
end

-- Live reservations whose lease has ended stop counting (that is how a dead process's hold
-- ends). Returns what they held, already removed from the leases zset.
local function expire_leases(leases, now)
  local gone = redis.call('ZRANGEBYSCORE', leases, '-inf', now)
  if #gone == 0 then return 0, 0 end
  local tok, nano = 0, 0
  for i = 1, #gone do
    local t, n = held(gone[i])
    tok = tok + t
    nano = nano + n
  end
  redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
  return tok, nano
end

local function sum_log_after(log, cutoff)
  local tok, nano = 0, 0
  local all = redis.call('ZRANGEBYSCORE', log, '(' .. string.format('%.0f', cutoff), '+inf')
  for i = 1, #all do
    local t, n = held(all[i])
    tok = tok + t
    nano = nano + n
  end
  return tok, nano
end

-- Spend settled at or before now - win rolls out. wm/wt/wn are the ledger's window fields as
-- read; the running sums are kept for one window length, and a new length is summed from the log
-- once. Writes what changed.
local function roll_window(ledger, log, win, wm, wt, wn, now)
  local cutoff = now - tonumber(win)
  if wm ~= win then
    local tok, nano = sum_log_after(log, cutoff)
    redis.call('ZREMRANGEBYSCORE', log, '-inf', cutoff)
    redis.call('HSET', ledger, 'wm', win, 'wt', tok, 'wn', nano)
    return tok, nano
  end
  local tok, nano = tonumber(wt) or 0, tonumber(wn) or 0
  local old = redis.call('ZRANGEBYSCORE', log, '-inf', cutoff)
  if #old > 0 then
    for i = 1, #old do
      local t, n = held(old[i])
      tok = tok - t
      nano = nano - n
    end
    redis.call('ZREMRANGEBYSCORE', log, '-inf', cutoff)
    redis.call('HSET', ledger, 'wt', tok, 'wn', nano)
  end
  return tok, nano
end
`;

/**
 * ARGV: tokens, nanoUsd, maxTokens|'', maxNanoUsd|'', windowMs|'', leaseMs, the limit as one
 * string ("maxTokens:maxNanoUsd:windowMs", recorded for reports when it changes), the id to give
 * the reservation ("r<unique>:<tokens>:<nanoUsd>", made by the caller so the script formats no
 * number for it). Returns {1, spentT, spentN, reservedT, reservedN}, {0, limitName, spentT,
 * spentN, reservedT, reservedN} (the figures as they were before this reservation), or {2} when
 * the id is already taken (no reservation made).
 */
export const RESERVE_LUA = `${PRELUDE}
local ledger, leases, log = KEYS[1], KEYS[2], KEYS[3]
local max_t, max_n, win = ARGV[3], ARGV[4], ARGV[5]
local now = now_ms()
local f = redis.call('HMGET', ledger, 'st', 'sn', 'rt', 'rn', 'lim')
local exp_t, exp_n = expire_leases(leases, now)
local res_t, res_n = (tonumber(f[3]) or 0) - exp_t, (tonumber(f[4]) or 0) - exp_n
local spent_t, spent_n
if win ~= '' then
  local w = redis.call('HMGET', ledger, 'wm', 'wt', 'wn')
  spent_t, spent_n = roll_window(ledger, log, win, w[1], w[2], w[3], now)
else
  spent_t, spent_n = tonumber(f[1]) or 0, tonumber(f[2]) or 0
end
if f[5] ~= ARGV[7] then
  redis.call('HSET', ledger, 'lim', ARGV[7])
end
local amt_t, amt_n = tonumber(ARGV[1]), tonumber(ARGV[2])
local refused
if max_t ~= '' and spent_t + res_t + amt_t > tonumber(max_t) then
  refused = 'maxTokens'
elseif max_n ~= '' and spent_n + res_n + amt_n > tonumber(max_n) then
  refused = 'maxCostUsd'
end
if refused or redis.call('ZADD', leases, 'NX', now + ARGV[6], ARGV[8]) == 0 then
  if exp_t ~= 0 or exp_n ~= 0 then
    redis.call('HSET', ledger, 'rt', res_t, 'rn', res_n)
  end
  if not refused then return {2} end
  return {0, refused, spent_t, spent_n, res_t, res_n}
end
redis.call('HSET', ledger, 'rt', res_t + amt_t, 'rn', res_n + amt_n)
return {1, spent_t, spent_n, res_t, res_n}
`;

/**
 * ARGV: id, tokens, nanoUsd, markerMs. Returns 1 when it charged, 0 when the id had already
 * settled (a retry). An id that holds no reservation (expired, released, or never reserved: spend
 * absorbed after the fact) is still charged, once. The id is marked settled in the settled zset
 * until markerMs from now. Markers whose time has come are forgotten by about one settle in 16
 * (chosen by the server clock's microseconds) and by every usage: never early, and a trim per
 * settle would cost every call a command.
 */
export const SETTLE_LUA = `
local ledger, leases, log, settled = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id = ARGV[1]
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
if t[2] % 16 == 0 then
  redis.call('ZREMRANGEBYSCORE', settled, '-inf', now)
end
if redis.call('ZADD', settled, 'NX', now + ARGV[4], id) == 0 then return 0 end
local tok, nano = tonumber(ARGV[2]), tonumber(ARGV[3])
local f = redis.call('HMGET', ledger, 'st', 'sn', 'rt', 'rn', 'wm')
local st, sn = (tonumber(f[1]) or 0) + tok, (tonumber(f[2]) or 0) + nano
if f[5] then
  -- A windowed limit has been seen: the log and the window sums take this spend too.
  redis.call('ZADD', log, now, id .. ':' .. ARGV[2] .. ':' .. ARGV[3])
  local w = redis.call('HMGET', ledger, 'wt', 'wn')
  redis.call('HSET', ledger, 'wt', (tonumber(w[1]) or 0) + tok, 'wn', (tonumber(w[2]) or 0) + nano)
end
if redis.call('ZREM', leases, id) == 1 then
  -- The id is the member the reserve script made: it ends in what the reservation holds.
  local t, n = string.match(id, ':(%d+):(%d+)$')
  redis.call('HSET', ledger, 'st', st, 'sn', sn, 'rt', (tonumber(f[3]) or 0) - t, 'rn', (tonumber(f[4]) or 0) - n)
else
  redis.call('HSET', ledger, 'st', st, 'sn', sn)
end
return 1
`;

/** ARGV: id. Returns 1 when it freed a reservation, 0 for an unknown, settled, released or expired id. */
export const RELEASE_LUA = `${PRELUDE}
local ledger, leases = KEYS[1], KEYS[2]
if redis.call('ZREM', leases, ARGV[1]) == 0 then return 0 end
local t, n = held(ARGV[1])
local f = redis.call('HMGET', ledger, 'rt', 'rn')
redis.call('HSET', ledger, 'rt', (tonumber(f[1]) or 0) - t, 'rn', (tonumber(f[2]) or 0) - n)
return 1
`;

/**
 * ARGV: windowMs|''|'*' (the window of the limit last recorded). Returns {spentT, spentN,
 * reservedT, reservedN, reservations, limit, totalT, totalN}; expired leases are dropped first, so
 * nothing expired is counted, and settled markers whose time has come are forgotten. A window
 * other than the one the limit rolls sums the log (which holds no more than the limit's window).
 */
export const USAGE_LUA = `${PRELUDE}
local ledger, leases, log, settled = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local win = ARGV[1]
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', settled, '-inf', now)
local f = redis.call('HMGET', ledger, 'st', 'sn', 'rt', 'rn', 'lim', 'wm', 'wt', 'wn')
local exp_t, exp_n = expire_leases(leases, now)
local res_t, res_n = (tonumber(f[3]) or 0) - exp_t, (tonumber(f[4]) or 0) - exp_n
if exp_t ~= 0 or exp_n ~= 0 then
  redis.call('HSET', ledger, 'rt', res_t, 'rn', res_n)
end
local lim = f[5] or ''
if win == '*' then win = string.match(lim, ':(%d*)$') or '' end
local total_t, total_n = tonumber(f[1]) or 0, tonumber(f[2]) or 0
local spent_t, spent_n = total_t, total_n
if win ~= '' and f[6] then
  if f[6] == win then
    spent_t, spent_n = roll_window(ledger, log, win, f[6], f[7], f[8], now)
  else
    spent_t, spent_n = sum_log_after(log, now - tonumber(win))
  end
end
return {spent_t, spent_n, res_t, res_n, redis.call('ZCARD', leases), lim, total_t, total_n}
`;

export interface BudgetScript {
  readonly name: 'reserve' | 'settle' | 'release' | 'usage';
  readonly lua: string;
  /** What EVALSHA names it by; Redis computes the same SHA-1 when it loads the text. */
  readonly sha: string;
  readonly keys: number;
}

function script(name: BudgetScript['name'], lua: string, keys: number): BudgetScript {
  return Object.freeze({ name, lua, sha: createHash('sha1').update(lua).digest('hex'), keys });
}

export const SCRIPTS = Object.freeze({
  reserve: script('reserve', RESERVE_LUA, 3),
  settle: script('settle', SETTLE_LUA, 4),
  release: script('release', RELEASE_LUA, 2),
  usage: script('usage', USAGE_LUA, 4),
});
