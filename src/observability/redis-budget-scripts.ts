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
 * Keys (see redis-budget-keys.ts): KEYS[1] ledger hash, KEYS[2] reservations hash (id ->
 * "tokens:nano" while reserved, "s" once settled), KEYS[3] leases zset (id -> when its lease or
 * its settled marker ends), KEYS[4] settled-spend log zset.
 * Ledger fields: st/sn spent (all time), wm window the log sums cover, wt/wn spent inside it,
 * rt/rn reserved, rc reservations in flight, seq reservation counter, lt/ln/lw the last limit
 * seen ('' for none).
 *
 * Each script reads the ledger once (HMGET) and writes it once (HSET): every redis.call inside a
 * script costs about a microsecond of the server's single thread, which every process waits on.
 */

const PRELUDE = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Lua's tostring turns 1e15 into "1e+15", and %.0f turns -0 into "-0": HSET would store them.
local function int(x)
  local s = string.format('%.0f', x)
  if s == '-0' then return '0' end
  return s
end

local function num(v)
  if not v or v == '' then return 0 end
  return tonumber(v)
end

local function held(v)
  local t, n = string.match(v, '^(%d+):(%d+)$')
  return tonumber(t), tonumber(n)
end

local function logged(member)
  local t, n = string.match(member, ':(%d+):(%d+)$')
  return tonumber(t), tonumber(n)
end

-- Entries of the reservations hash whose time in the leases zset has come: a reservation whose
-- lease ended stops counting (that is how a dead process's hold ends), and a settled marker is
-- forgotten. In chunks, because unpack() has a stack limit.
local function expire_leases(ledger, res, leases, now)
  local gone = redis.call('ZRANGEBYSCORE', leases, '-inf', now)
  if #gone == 0 then return end
  local tok, nano, count = 0, 0, 0
  for i = 1, #gone, 1000 do
    local chunk = {unpack(gone, i, math.min(i + 999, #gone))}
    local values = redis.call('HMGET', res, unpack(chunk))
    for j = 1, #chunk do
      local v = values[j]
      if v and v ~= 's' then
        local t, n = held(v)
        tok = tok + t
        nano = nano + n
        count = count + 1
      end
    end
    redis.call('HDEL', res, unpack(chunk))
  end
  redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
  if count > 0 then
    redis.call('HINCRBY', ledger, 'rt', int(-tok))
    redis.call('HINCRBY', ledger, 'rn', int(-nano))
    redis.call('HINCRBY', ledger, 'rc', -count)
  end
end

local function sum_log_after(log, cutoff)
  local tok, nano = 0, 0
  local all = redis.call('ZRANGEBYSCORE', log, '(' .. int(cutoff), '+inf')
  for i = 1, #all do
    local t, n = logged(all[i])
    tok = tok + t
    nano = nano + n
  end
  return tok, nano
end

-- Spend settled at or before now - win rolls out. The running window sums are kept for one
-- window length; a new length is summed from the log once.
local function roll_window(ledger, log, win, now)
  local cutoff = now - win
  local f = redis.call('HMGET', ledger, 'wm', 'wt', 'wn')
  if f[1] ~= int(win) then
    local tok, nano = sum_log_after(log, cutoff)
    redis.call('ZREMRANGEBYSCORE', log, '-inf', int(cutoff))
    redis.call('HSET', ledger, 'wm', int(win), 'wt', int(tok), 'wn', int(nano))
    return tok, nano
  end
  local tok, nano = num(f[2]), num(f[3])
  local old = redis.call('ZRANGEBYSCORE', log, '-inf', int(cutoff))
  if #old > 0 then
    for i = 1, #old do
      local t, n = logged(old[i])
      tok = tok - t
      nano = nano - n
    end
    redis.call('ZREMRANGEBYSCORE', log, '-inf', int(cutoff))
    redis.call('HSET', ledger, 'wt', int(tok), 'wn', int(nano))
  end
  return tok, nano
end
`;

/**
 * ARGV: tokens, nanoUsd, maxTokens|'', maxNanoUsd|'', windowMs|'', leaseMs.
 * Returns {1, id, spentT, spentN, reservedT, reservedN} or {0, limitName, spentT, spentN, reservedT, reservedN},
 * the figures as they were before this reservation.
 */
export const RESERVE_LUA = `${PRELUDE}
local ledger, res, leases, log = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local amt_t, amt_n = tonumber(ARGV[1]), tonumber(ARGV[2])
local max_t, max_n, win, lease = ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
local now = now_ms()
expire_leases(ledger, res, leases, now)
local spent_t, spent_n
if win ~= '' then
  spent_t, spent_n = roll_window(ledger, log, tonumber(win), now)
end
local f = redis.call('HMGET', ledger, 'st', 'sn', 'rt', 'rn', 'lt', 'ln', 'lw', 'seq', 'rc')
if win == '' then
  spent_t, spent_n = num(f[1]), num(f[2])
end
local res_t, res_n = num(f[3]), num(f[4])
if f[5] ~= max_t or f[6] ~= max_n or f[7] ~= win then
  redis.call('HSET', ledger, 'lt', max_t, 'ln', max_n, 'lw', win)
end
if max_t ~= '' and spent_t + res_t + amt_t > tonumber(max_t) then
  return {0, 'maxTokens', spent_t, spent_n, res_t, res_n}
end
if max_n ~= '' and spent_n + res_n + amt_n > tonumber(max_n) then
  return {0, 'maxCostUsd', spent_t, spent_n, res_t, res_n}
end
local seq = num(f[8]) + 1
local id = 'r' .. int(seq)
redis.call('HSET', ledger, 'seq', int(seq), 'rt', int(res_t + amt_t), 'rn', int(res_n + amt_n), 'rc', int(num(f[9]) + 1))
redis.call('HSET', res, id, ARGV[1] .. ':' .. ARGV[2])
redis.call('ZADD', leases, int(now + lease), id)
return {1, id, spent_t, spent_n, res_t, res_n}
`;

/**
 * ARGV: id, tokens, nanoUsd, markerMs. Returns 1 when it charged, 0 when the id had already
 * settled (a retry). An id that holds no reservation (expired, or never reserved: spend absorbed
 * after the fact) is still charged, once. The settled id stays in the reservations hash as "s",
 * its leases entry moved to when that marker may be forgotten.
 */
export const SETTLE_LUA = `${PRELUDE}
local ledger, res, leases, log = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, tok, nano = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local v = redis.call('HGET', res, id)
if v == 's' then return 0 end
local now = now_ms()
local f = redis.call('HMGET', ledger, 'st', 'sn', 'rt', 'rn', 'rc', 'wm', 'wt', 'wn')
local fields = {'st', int(num(f[1]) + tok), 'sn', int(num(f[2]) + nano)}
if v then
  local t, n = held(v)
  table.insert(fields, 'rt')
  table.insert(fields, int(num(f[3]) - t))
  table.insert(fields, 'rn')
  table.insert(fields, int(num(f[4]) - n))
  table.insert(fields, 'rc')
  table.insert(fields, int(num(f[5]) - 1))
end
if f[6] then
  redis.call('ZADD', log, now, id .. ':' .. ARGV[2] .. ':' .. ARGV[3])
  table.insert(fields, 'wt')
  table.insert(fields, int(num(f[7]) + tok))
  table.insert(fields, 'wn')
  table.insert(fields, int(num(f[8]) + nano))
end
redis.call('HSET', ledger, unpack(fields))
redis.call('HSET', res, id, 's')
redis.call('ZADD', leases, int(now + tonumber(ARGV[4])), id)
return 1
`;

/** ARGV: id. Returns 1 when it freed a reservation, 0 for an unknown, settled or expired id. */
export const RELEASE_LUA = `${PRELUDE}
local ledger, res, leases = KEYS[1], KEYS[2], KEYS[3]
local v = redis.call('HGET', res, ARGV[1])
if not v or v == 's' then return 0 end
local t, n = held(v)
redis.call('HDEL', res, ARGV[1])
redis.call('ZREM', leases, ARGV[1])
redis.call('HINCRBY', ledger, 'rt', int(-t))
redis.call('HINCRBY', ledger, 'rn', int(-n))
redis.call('HINCRBY', ledger, 'rc', -1)
return 1
`;

/**
 * ARGV: windowMs|''|'*' (the window of the limit last recorded). Returns {spentT, spentN,
 * reservedT, reservedN, reservations, lt, ln, lw, totalT, totalN}; expired leases are dropped
 * first, so nothing expired is counted. A window other than the one the limit rolls sums the log
 * (which holds no more than the limit's window).
 */
export const USAGE_LUA = `${PRELUDE}
local ledger, res, leases, log = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local win = ARGV[1]
local now = now_ms()
expire_leases(ledger, res, leases, now)
local f = redis.call('HMGET', ledger, 'st', 'sn', 'rt', 'rn', 'lt', 'ln', 'lw', 'wm', 'rc')
if win == '*' then win = f[7] or '' end
local spent_t, spent_n = num(f[1]), num(f[2])
if win ~= '' and f[8] then
  if f[8] == win then
    spent_t, spent_n = roll_window(ledger, log, tonumber(win), now)
  else
    spent_t, spent_n = sum_log_after(log, now - tonumber(win))
  end
end
return {spent_t, spent_n, num(f[3]), num(f[4]), num(f[9]), f[5] or '', f[6] or '', f[7] or '', num(f[1]), num(f[2])}
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
  reserve: script('reserve', RESERVE_LUA, 4),
  settle: script('settle', SETTLE_LUA, 4),
  release: script('release', RELEASE_LUA, 3),
  usage: script('usage', USAGE_LUA, 4),
});
