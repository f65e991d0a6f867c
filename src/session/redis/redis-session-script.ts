import { createHash } from 'node:crypto';

/**
 * One turn's append, atomically: refused as a repeat when its (namespace, rootRunId) pair was
 * appended before; else its messages pushed, the namespace trimmed to its cap (the drop counted
 * in the record), the record kept (root namespaces), both keys' time to live renewed. Two keys
 * and six calls a root turn (four a child's): no JSON is decoded, nothing is done a message. A
 * namespace's id is added to `ns` only when its list is new (a push that made the list as long
 * as it pushed). A namespace past its cap drops its oldest as the in-memory store does: they are
 * counted dropped at once (a load reads the last maxMessagesPerSession at most), and the list is
 * cut only once they are as many as the cap (at most twice the cap): not an LTRIM every append
 * of a namespace at its cap.
 * KEYS: the namespace's messages, the session's hash (redis-session-keys.ts).
 * ARGV: pair, maxMessages, ttlMs (0: none), record JSON ('' for none), rootRunId, namespace id, messages...
 * Returns -1 for a repeat, else the number of messages dropped.
 */
const APPEND = `
if redis.call('HSETNX', KEYS[2], ARGV[1], 1) == 0 then return -1 end
local len = 0
for i = 7, #ARGV, 500 do
  len = redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 499, #ARGV)))
end
if len > 0 and len == #ARGV - 6 then
  local known = redis.call('HGET', KEYS[2], 'ns')
  if not known then
    redis.call('HSET', KEYS[2], 'ns', ARGV[6])
  elseif not string.find(' ' .. known .. ' ', ' ' .. ARGV[6] .. ' ', 1, true) then
    redis.call('HSET', KEYS[2], 'ns', known .. ' ' .. ARGV[6])
  end
end
local dropped = 0
local max = tonumber(ARGV[2])
if len > max then
  dropped = math.min(#ARGV - 6, len - max)
  if len >= 2 * max then redis.call('LTRIM', KEYS[1], len - max, -1) end
end
if ARGV[4] ~= '' then
  local record = ARGV[4]
  if dropped > 0 then record = string.sub(record, 1, -2) .. ',"droppedMessages":' .. dropped .. '}' end
  local n = redis.call('HINCRBY', KEYS[2], '#', 1)
  redis.call('HSET', KEYS[2], 'r:' .. n, record, 'i:' .. ARGV[5], n)
end
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return dropped
`;

export const APPEND_SCRIPT = Object.freeze({ lua: APPEND, sha: createHash('sha1').update(APPEND).digest('hex') });
