import { LEVEL_PREFIXES, TENANT_KEY_SUFFIX } from './redis-budget-keys.js';

/**
 * Lua functions the budget scripts share (see redis-budget-scripts.ts for the key and field
 * layout). Every time is the server's: `TIME`, plus a shift that is 0 outside the tests that move
 * a period boundary up to the present (a real server's clock cannot be set forward).
 *
 * Cost: each redis.call costs the server's single thread about half a microsecond on top of the
 * command, and every process waits on that thread, so the common paths make as few as they can;
 * what only happens now and then (a lease that ended, spend rolling out of a window, a level's
 * expiry moving on, a threshold crossed) pays for its own calls.
 */
export const PRELUDE = `
-- Every script's ARGV[1]: the clock shift. Times the scripts keep are on the shifted clock.
local SHIFT = tonumber(ARGV[1])
-- The key prefixes of the levels inside the tenant (see prefixes_of).
local PREFIXES = '${LEVEL_PREFIXES}'

local function now_ms()
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000) + SHIFT
end

local function num(x) return tonumber(x) or 0 end
local function floor0(x) if x < 0 then return 0 end return x end

-- The key prefixes of the levels inside the tenant ("u,s": INNER_LEVELS in budget-levels.ts), in
-- the order their ids travel in reservation ids and log entries. A level's hash is base .. prefix .. ':' .. id.
local function prefixes_of(text)
  local p = {}
  for x in string.gmatch(text, '[^,]+') do p[#p + 1] = x end
  return p
end

-- A reservation id: "r<unique>:<tokens>:<nano>[:<id at level 1>:<id at level 2>...]" (ids escaped,
-- '' at a level it is not held at). Returns tokens, nano and the ids' part (see ids_of).
local function parse_id(id)
  local t, n, rest = string.match(id, '^r[^:]*:(%d+):(%d+)(.*)$')
  return tonumber(t), tonumber(n), rest
end

-- The ids by level of a reservation id's ids part ":<id>:<id>".
local function ids_of(rest)
  local ids = {}
  for x in string.gmatch(rest or '', ':([^:]*)') do ids[#ids + 1] = x end
  return ids
end

-- The level hashes' members ("u:<id>") of ids by level.
local function members_of(P, ids)
  local m = {}
  for i = 1, #ids do
    if ids[i] ~= '' and P[i] then m[#m + 1] = P[i] .. ':' .. ids[i] end
  end
  return m
end

-- A log entry: "id|tokens|nano|<id at level 1>|<id at level 2>..." (the id may hold '|', so it is
-- read from the end: as many level ids as there are levels, or fewer for an entry written when
-- there were fewer; "id:tokens:nano" from before levels). Returns tokens, nano and the ids by level.
local function parse_log(e, P)
  for k = #P, 0, -1 do
    local m = {string.match(e, '|(%d+)|(%d+)' .. string.rep('|([^|]*)', k) .. '$')}
    if m[1] then return tonumber(table.remove(m, 1)), tonumber(table.remove(m, 1)), m end
  end
  local t, n = string.match(e, ':(%d+):(%d+)$')
  return tonumber(t) or 0, tonumber(n) or 0, {}
end

-- Whether a log entry's ids (by level) belong to a level member ("u:<id>").
local function belongs(member, P, ids)
  for i = 1, #P do
    local p = P[i] .. ':'
    if string.sub(member, 1, #p) == p then return ids[i] == string.sub(member, #p + 1) end
  end
  return false
end

-- The period holding now among four starts "b0,b1,b2,b3" the caller computed for the zone.
local function period_of(now, starts)
  if starts == '' then return nil, nil end
  local b = {}
  for x in string.gmatch(starts, '[^,]+') do b[#b + 1] = tonumber(x) end
  for i = 1, 3 do
    if now >= b[i] and now < b[i + 1] then return b[i], b[i + 1] end
  end
  if now < b[1] then return b[1], b[2] end
  return b[3], b[4]
end

-- What a call's limit counts, from its count argument: '' all time, 'w<windowMs>' a window,
-- 'p<b0>,<b1>,<b2>,<b3>' a period (see period_of). Returns the window ('' for none), then the
-- period's start and end (nil for none).
local function count_of(now, text)
  local kind = string.sub(text, 1, 1)
  if kind == 'w' then return string.sub(text, 2), nil, nil end
  if kind == 'p' then return '', period_of(now, string.sub(text, 2)) end
  return '', nil, nil
end

-- The levels of a call, the tenant's first: "maxT,maxN,member|..." (caps '' when none, member ''
-- for the tenant) as one flat list: level i's caps at 3i-2 and 3i-1, its member at 3i.
local function levels_of(text)
  local L = {}
  for t, n, m in string.gmatch(text, '([^,|]*),([^,|]*),([^|]*)') do
    L[#L + 1] = t; L[#L + 1] = n; L[#L + 1] = m
  end
  return L
end

-- Reads a level hash: f[1], f[2] what it holds (rt, rn), f[3], f[4] its all-time sums (st, sn),
-- then for a window or a period its sums there (wm, wt, wn or ps, pt, pn at f[5], f[6], f[7]),
-- then the fields '...' from f[x]. Only the fields of the count the limit keeps are read.
local function read_level(key, win, ps, ...)
  if win ~= '' then return redis.call('HMGET', key, 'rt', 'rn', 'st', 'sn', 'wm', 'wt', 'wn', ...), 8 end
  if ps then return redis.call('HMGET', key, 'rt', 'rn', 'st', 'sn', 'ps', 'pt', 'pn', ...), 8 end
  return redis.call('HMGET', key, 'rt', 'rn', 'st', 'sn', ...), 5
end

-- A level's spend as a period or all time counts it, from read_level's fields.
local function counted(f, ps)
  if not ps then return num(f[3]), num(f[4]) end
  if tonumber(f[5]) == ps then return num(f[6]), num(f[7]) end
  return 0, 0
end

-- Which cap of a level would be passed by a total, if any.
local function over(max_t, max_n, tot_t, tot_n)
  if max_t ~= '' and tot_t > tonumber(max_t) then return 'maxTokens' end
  if max_n ~= '' and tot_n > tonumber(max_n) then return 'maxCostUsd' end
  return nil
end

-- Frees what a reservation held at a level hash (one that still exists).
local function unhold(key, t, n)
  local f = redis.call('HMGET', key, 'rt', 'rn')
  if f[1] or f[2] then
    redis.call('HSET', key, 'rt', floor0(num(f[1]) - t), 'rn', floor0(num(f[2]) - n))
  end
end

-- Leases that ended stop holding (that is how a dead process's hold ends): removed, their holds
-- freed at the levels inside the tenant they held at, and what they held at the tenant returned.
local function expire_leases(base, leases, now, P)
  local gone = redis.call('ZRANGEBYSCORE', leases, '-inf', now)
  if #gone == 0 then return 0, 0 end
  local tok, nano = 0, 0
  for i = 1, #gone do
    local t, n, rest = parse_id(gone[i])
    if t then
      tok, nano = tok + t, nano + n
      for _, m in ipairs(members_of(P, ids_of(rest))) do unhold(base .. m, t, n) end
    end
  end
  redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
  return tok, nano
end

-- Spend of one level (all of the tenant's when member is nil) settled after cutoff, from the log.
local function sum_log_after(log, cutoff, member, P)
  local tok, nano = 0, 0
  local all = redis.call('ZRANGEBYSCORE', log, '(' .. string.format('%.0f', cutoff), '+inf')
  for i = 1, #all do
    local t, n, ids = parse_log(all[i], P)
    if member == nil or belongs(member, P, ids) then tok, nano = tok + t, nano + n end
  end
  return tok, nano
end

-- Spend rolled out of a window leaves a level's window sums too (when they are kept for it).
local function unwindow(key, win, t, n)
  local w = redis.call('HMGET', key, 'wm', 'wt', 'wn')
  if w[1] == win then
    redis.call('HSET', key, 'wt', floor0(num(w[2]) - t), 'wn', floor0(num(w[3]) - n))
  end
end

-- The tenant's window: spend settled at or before now - win rolls out of it, and out of the
-- window sums of the levels inside it it was settled for. A new window length is summed from
-- the log once. Returns the tenant's sums inside the window.
local function roll_window(base, ledger, log, win, wm, wt, wn, now, P)
  local cutoff = now - tonumber(win)
  if wm ~= win then
    local tok, nano = sum_log_after(log, cutoff, nil, P)
    redis.call('ZREMRANGEBYSCORE', log, '-inf', cutoff)
    redis.call('HSET', ledger, 'wm', win, 'wt', tok, 'wn', nano)
    return tok, nano
  end
  local tok, nano = num(wt), num(wn)
  local old = redis.call('ZRANGEBYSCORE', log, '-inf', cutoff)
  if #old > 0 then
    for i = 1, #old do
      local t, n, ids = parse_log(old[i], P)
      tok, nano = tok - t, nano - n
      for _, m in ipairs(members_of(P, ids)) do unwindow(base .. m, win, t, n) end
    end
    redis.call('ZREMRANGEBYSCORE', log, '-inf', cutoff)
    redis.call('HSET', ledger, 'wt', floor0(tok), 'wn', floor0(nano))
  end
  return floor0(tok), floor0(nano)
end

-- A user's or session's window sums (after the tenant's roll), summed from the log when the
-- level has not kept them for this window length. The third value says they must be written.
local function level_window(log, member, wm, wt, wn, win, now, P)
  if wm == win then return num(wt), num(wn), false end
  local tok, nano = sum_log_after(log, now - tonumber(win), member, P)
  return tok, nano, true
end

-- How long a user's or session's hash must live: until its period ends, or its spend rolls out
-- of the window, and never before the holds in it end. nil: it counts all time and is kept.
local function level_need(now, lease, pe, win, settling)
  if pe then return pe + lease end
  if win ~= '' then
    if settling then return now + tonumber(win) + lease end
    return now + lease
  end
  return nil
end

-- Moves a level hash's end of life (xp, and its score in the levels set) out to what it needs,
-- with slack so the next calls need not. No key of the store has a TTL: a Redis that evicts keys
-- with a TTL first (volatile-*) would otherwise drop a user's sums while the marker and the ledger
-- stayed, and the user's limit would count from zero unseen. Hashes whose time has come are
-- deleted by sweep_levels instead. Adds xp to the fields w the caller writes, and returns whether
-- a TTL an older version set must go once they are written ('persist') or nothing to do (nil).
local function keep_level(index, member, xp, need, w, lease)
  if need == nil then
    if xp == '0' then return nil end
    redis.call('ZADD', index, '+inf', member)
    w[#w + 1] = 'xp'; w[#w + 1] = 0
    if xp then return 'persist' end
    return nil
  end
  if xp and xp ~= '0' and tonumber(xp) >= need then return nil end
  local at = need + lease
  redis.call('ZADD', index, at, member)
  w[#w + 1] = 'xp'; w[#w + 1] = at
  if xp then return 'persist' end
  return nil
end

local function expire_level(key, action)
  if action == 'persist' then redis.call('PERSIST', key) end
end

-- Deletes the user and session hashes whose end of life has passed (their period over, their
-- spend rolled out of the window, no hold left in them): what a TTL did before, done by the
-- scripts so that no key of the store is one Redis may evict first. A few a call, now and then.
local function sweep_levels(base, index, now)
  local done = redis.call('ZRANGEBYSCORE', index, '-inf', now, 'LIMIT', 0, 32)
  for i = 1, #done do
    redis.call('DEL', base .. done[i])
    redis.call('ZREM', index, done[i])
  end
end
`;

/**
 * The Lua naming the keys of the tenant a budget script needs from its KEYS[1], the ledger: every
 * key of a tenant is its base and a suffix (redis-budget-keys.ts), so they share its hash tag and
 * slot. Names only the ones asked for: each costs a string the script would build for nothing.
 */
export function tenantKeysLua(...names: readonly Exclude<keyof typeof TENANT_KEY_SUFFIX, 'ledger'>[]): string {
  const others = names.map((n) => `local ${n === 'levels' ? 'index' : n} = base .. '${TENANT_KEY_SUFFIX[n]}'`);
  return [`local ledger = KEYS[1]`, `local base = string.sub(ledger, 1, -${TENANT_KEY_SUFFIX.ledger.length + 1})`, ...others].join('\n');
}
