import { createHash } from 'node:crypto';
import type { BudgetScript } from '../budget/redis/redis-budget-scripts.js';

/**
 * The Lua run inside Redis for each task-store operation: one script an operation, so a sweep
 * and the step after it (a bound checked, a task filed, a pause resumed) are one atomic step for
 * the whole fleet. Every key of one principal shares KEYS[1], its base "<prefix>:{<tag>}:", so
 * they live in one hash slot:
 *   t:<id>    hash: core (JSON: ids, owner, agent, placement), ctx, history (JSON), state, ms,
 *             seq, answer, failure, report, expired, pause (JSON: snapshot, interruptions),
 *             bytes (answer and messages), pbytes (the snapshot)
 *   all       hash id -> "ms|seq|state|contextId": what ListTasks filters and pages on
 *   running   zset id -> lease end (server ms);  paused, finished: zset id -> when filed
 *   orphans   zset id -> when its lease lapsed: durable tasks (field durable=1) whose replica died,
 *             not failed but left, marked orphan=<ms>, for the next replica that reads one to CLAIM
 *   pb, fb    bytes held by paused and by finished tasks;  seq: the principal's creation counter
 * Times are the server's (TIME), so replicas with different clocks agree on expiry and leases.
 * ARGV[1..6] of every script: pausedTtlMs, finishedTtlMs, maxFinished, maxFinishedBytes, keepMs
 * (how long an idle principal's keys live), leaseMs; the operation's own follow.
 */
const PRELUDE = `
local base = KEYS[1]
local pausedTtl, finishedTtl = tonumber(ARGV[1]), tonumber(ARGV[2])
local maxFinished, maxFinishedBytes = tonumber(ARGV[3]), tonumber(ARGV[4])
-- What goes back to Redis goes as a string: a Lua number is formatted with %.14g (the slow
-- floating-point path of printf), costing more than the call itself; keep is passed on as given,
-- and whole ms are formatted as integers.
local keep, lease = ARGV[5], tonumber(ARGV[6])
local FAILED = '4'
local function ms(x) return string.format('%d', x) end
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local nowMs = ms(now)
local function tk(id) return base .. 't:' .. id end
local function num(x) return tonumber(x) or 0 end

-- An idle principal's keys go by themselves keep ms after the last write that needs them: a key
-- is kept (at the script's end) when an entry or a count is added to it, a zset together with its
-- bytes count, and "all" and "seq" whenever a task's hash is kept, as they describe its tasks. So
-- no key expires before an entry, count or hash that depends on it, and a script renews only the
-- keys it wrote rather than all eight. A removal renews nothing: what is left was kept when added.
local kept = {}
local function touch(k) kept[k] = true end
local function keepTask(id)
  redis.call('PEXPIRE', tk(id), keep)
  touch('all')
  touch('seq')
end
local function keepTouched()
  for k in pairs(kept) do redis.call('PEXPIRE', base .. k, keep) end
end

-- A task's events channel, "<prefix>:events:<tag>:<id>" (redis-task-channels.ts), from the base
-- "<prefix>:{<tag>}:". A stream watching the task on another replica hears there that it was
-- filed (paused or ended) and reads it at once, rather than at its next reread.
local prefix, tag = string.match(base, '^(.*):{([^}]*)}:$')
local function filed(id) redis.call('PUBLISH', prefix .. ':events:' .. tag .. ':' .. id, '{"filed":true}') end

local function summarize(id)
  local h = redis.call('HMGET', tk(id), 'ms', 'seq', 'state', 'ctx')
  redis.call('HSET', base .. 'all', id, h[1] .. '|' .. h[2] .. '|' .. h[3] .. '|' .. h[4])
  touch('all')
end

local function forget(id)
  redis.call('DECRBY', base .. 'fb', redis.call('HGET', tk(id), 'bytes') or '0')
  redis.call('ZREM', base .. 'finished', id)
  redis.call('HDEL', base .. 'all', id)
  redis.call('DEL', tk(id))
end

local function unpark(id)
  if redis.call('ZREM', base .. 'paused', id) == 1 then
    local h = redis.call('HMGET', tk(id), 'bytes', 'pbytes')
    redis.call('DECRBY', base .. 'pb', ms(num(h[1]) + num(h[2])))
  end
end

-- Filed as finished (this principal's oldest go first past its bounds).
local function retire(id)
  redis.call('ZREM', base .. 'running', id)
  unpark(id)
  summarize(id)
  redis.call('ZADD', base .. 'finished', nowMs, id)
  redis.call('INCRBY', base .. 'fb', redis.call('HGET', tk(id), 'bytes') or '0')
  touch('finished')
  touch('fb')
  keepTask(id)
  while redis.call('ZCARD', base .. 'finished') > maxFinished or num(redis.call('GET', base .. 'fb')) > maxFinishedBytes do
    local oldest = redis.call('ZRANGE', base .. 'finished', 0, 0)[1]
    if not oldest then break end
    forget(oldest)
  end
end

local function fail(id, why, name, expired)
  redis.call('HSET', tk(id), 'state', FAILED, 'ms', nowMs, 'failure', cjson.encode({ type = 'child_error', message = why, name = name }))
  if expired then redis.call('HSET', tk(id), 'expired', why) end
  redis.call('HDEL', tk(id), 'pause', 'pbytes')
  retire(id)
  filed(id)
end

local function sweep()
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', base .. 'paused', '-inf', ms(now - pausedTtl - 1), 'LIMIT', '0', '200')) do
    unpark(id)
    fail(id, 'task ' .. id .. ' expired: it waited for input longer than pausedTtlMs (' .. pausedTtl .. ' ms), and its paused run was dropped', 'TaskExpired', true)
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', base .. 'running', '-inf', ms(now - 1), 'LIMIT', '0', '200')) do
    if redis.call('HGET', tk(id), 'durable') == '1' then
      -- A durable tree is recorded: another replica finishes it, so it still reads working.
      redis.call('ZREM', base .. 'running', id)
      redis.call('ZADD', base .. 'orphans', nowMs, id)
      touch('orphans')
      redis.call('HSET', tk(id), 'orphan', nowMs)
    else
      fail(id, 'task ' .. id .. ' failed: the replica running it stopped renewing its lease (leaseMs ' .. lease .. ' ms); it may have crashed or lost Redis', 'TaskLeaseLapsed', false)
    end
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', base .. 'finished', '-inf', ms(now - finishedTtl - 1), 'LIMIT', '0', '200')) do
    forget(id)
  end
end

-- In flight under a lease from now.
local function inFlight(id)
  redis.call('ZADD', base .. 'running', ms(now + lease), id)
  touch('running')
  keepTask(id)
end
`;

function script(name: string, body: string): BudgetScript {
  const lua = PRELUDE + body;
  return { name, lua, sha: createHash('sha1').update(lua).digest('hex') } as BudgetScript;
}

/**
 * ARGV[7], ARGV[8]: maxPaused, maxPausedBytes; ARGV[9]: id; then field, value pairs. After the
 * sweep, a principal at its paused bound (the comparison of principal-tasks.ts pausedRefusal) is
 * refused and nothing is added; else the task is in flight under a lease. Returns {1 added or 0
 * refused, paused count, paused bytes}: one step, so no other replica's task slips in between.
 */
export const ADD = script('tasks.add', `
sweep()
local paused, pb = redis.call('ZCARD', base .. 'paused'), num(redis.call('GET', base .. 'pb'))
if paused >= tonumber(ARGV[7]) or pb >= tonumber(ARGV[8]) then return { 0, paused, pb } end
local id = ARGV[9]
local seq = redis.call('INCR', base .. 'seq')
redis.call('DEL', tk(id))
redis.call('HSET', tk(id), 'seq', seq, unpack(ARGV, 10))
inFlight(id)
summarize(id)
keepTouched()
return { 1, paused, pb }
`);

/** ARGV[7]: id; then field, value pairs. A paused task runs again: 0 when it no longer waits (resumed elsewhere, ended, expired). */
export const RESUME = script('tasks.resume', `
sweep()
local id = ARGV[7]
if not redis.call('ZSCORE', base .. 'paused', id) then return 0 end
unpark(id)
redis.call('HDEL', tk(id), 'pause', 'pbytes')
redis.call('HSET', tk(id), unpack(ARGV, 8))
inFlight(id)
summarize(id)
keepTouched()
return 1
`);

/**
 * ARGV[7]: id, ARGV[8]: 'paused' or 'finished' (where it goes), ARGV[9]: 'running' or 'paused'
 * (where it must be now); then field, value pairs ('' deletes a field; a field not given is left
 * as it is). 0 when it was not there: its lease lapsed, or another replica took it; nothing is
 * written then. Filed, the task's watchers on other replicas are told (after the run's events,
 * which its replica published on the same connection before this).
 */
export const FILE = script('tasks.file', `
sweep()
local id, to, from = ARGV[7], ARGV[8], ARGV[9]
if not redis.call('ZSCORE', base .. from, id) then return 0 end
-- Its paused bytes leave the count as they were counted, before the fields below change them.
if from == 'paused' then unpark(id) end
local set, drop = {}, {}
for i = 10, #ARGV, 2 do
  if ARGV[i + 1] == '' then drop[#drop + 1] = ARGV[i] else set[#set + 1] = ARGV[i]; set[#set + 1] = ARGV[i + 1] end
end
if #set > 0 then redis.call('HSET', tk(id), unpack(set)) end
if #drop > 0 then redis.call('HDEL', tk(id), unpack(drop)) end
if to == 'paused' then
  redis.call('ZREM', base .. 'running', id)
  summarize(id)
  redis.call('ZADD', base .. 'paused', nowMs, id)
  local h = redis.call('HMGET', tk(id), 'bytes', 'pbytes')
  redis.call('INCRBY', base .. 'pb', ms(num(h[1]) + num(h[2])))
  touch('paused')
  touch('pb')
  keepTask(id)
else
  retire(id)
end
keepTouched()
filed(id)
return 1
`);

/** ARGV[7..]: ids of tasks this replica runs. Their leases go on; returns the ids no longer held (lapsed and failed, or ended elsewhere). */
export const RENEW = script('tasks.renew', `
local lost = {}
for i = 7, #ARGV do
  if redis.call('ZSCORE', base .. 'running', ARGV[i]) then
    inFlight(ARGV[i])
  else
    lost[#lost + 1] = ARGV[i]
  end
end
keepTouched()
return lost
`);

/**
 * ARGV[7]: id. An orphaned durable task becomes this replica's: in flight under a new lease, no
 * longer an orphan. Its fields, flat; empty when it is not an orphan (another replica claimed it).
 */
export const CLAIM = script('tasks.claim', `
sweep()
local id = ARGV[7]
if redis.call('ZREM', base .. 'orphans', id) == 0 then return {} end
redis.call('HDEL', tk(id), 'orphan')
inFlight(id)
keepTouched()
return redis.call('HGETALL', tk(id))
`);

/** ARGV[7]: id. The task's fields, flat, after the sweep (empty when it is not this principal's). */
export const GET = script('tasks.get', `
sweep()
keepTouched()
return redis.call('HGETALL', tk(ARGV[7]))
`);

/** The principal's task summaries ("all", flat), after the sweep. */
export const LIST = script('tasks.list', `
sweep()
keepTouched()
return redis.call('HGETALL', base .. 'all')
`);

/** ARGV[7..]: ids. Each task's fields, flat, in order. */
export const FETCH = script('tasks.fetch', `
local out = {}
for i = 7, #ARGV do out[#out + 1] = redis.call('HGETALL', tk(ARGV[i])) end
return out
`);
