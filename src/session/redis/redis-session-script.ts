import { createHash } from 'node:crypto';

/**
 * One turn's append, atomically: refused as a repeat when its (namespace, rootRunId) pair was
 * appended before; else its messages pushed, the namespace trimmed to its cap (the drop counted
 * in the record), the record kept (root namespaces), every key's time to live renewed.
 * KEYS: messages, appended, records, recordIndex, namespaces.
 * ARGV: pair, maxMessages, ttlMs (0: none), record JSON ('' for none), rootRunId, namespace key, messages...
 * Returns -1 for a repeat, else the number of messages dropped.
 */
const APPEND = `
if redis.call('SADD', KEYS[2], ARGV[1]) == 0 then return -1 end
local len = 0
for i = 7, #ARGV, 500 do
  len = redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 499, #ARGV)))
end
if len == 0 then len = redis.call('LLEN', KEYS[1]) end
local dropped = 0
local max = tonumber(ARGV[2])
if len > max then
  dropped = len - max
  redis.call('LTRIM', KEYS[1], dropped, -1)
end
redis.call('SADD', KEYS[5], ARGV[6])
if ARGV[4] ~= '' then
  local record = ARGV[4]
  if dropped > 0 then record = string.sub(record, 1, -2) .. ',"droppedMessages":' .. dropped .. '}' end
  local n = redis.call('RPUSH', KEYS[3], record)
  redis.call('HSET', KEYS[4], ARGV[5], n - 1)
end
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  for i = 1, 5 do redis.call('PEXPIRE', KEYS[i], ttl) end
end
return dropped
`;

export const APPEND_SCRIPT = Object.freeze({ lua: APPEND, sha: createHash('sha1').update(APPEND).digest('hex') });
