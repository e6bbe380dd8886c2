import { AUDIT_PRUNE_BATCH } from '@fleetcron/core/backend';
import { auditAppend } from './audit-scripts.js';

/**
 * The Lua scripts of the stored schedules of {@link RedisStore}. Each write checks everything
 * before it writes anything (a Redis script is atomic but not rolled back on an error), then
 * writes the record, the two indexes and PUBLISHes the id, as one atomic step: a change and its
 * notification are never separated. KEYS are always records, ids, by-handler (one hash tag).
 *
 * A record is `<header JSON>\n<definition JSON>`. The definition is JSON written by the client
 * and never parsed here; the header is `[version, removed 0|1, createdAt, createdBy, updatedAt,
 * updatedBy, handler, writeToken, previous updatedAt, previous updatedBy, previous writeToken]`
 * (the last three only on a tombstone: what a re-sent remove that finds its own tombstone
 * answers, the record as it was).
 * `writeToken` is the client's random id of the write: a write re-sent by ioredis after a
 * reconnect that finds its own token answers as the first send did instead of as a conflict.
 *
 * Every write that changes a record also appends its audit entry in the same script (KEYS end
 * with the audit keys, ARGV with the audit args: see `audit-scripts.ts`); an answer that writes
 * nothing (duplicate, unknown, conflict, a re-send) appends nothing.
 */
const HELPERS = `${auditAppend(AUDIT_PRUNE_BATCH)}
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function split(record)
  local nl = string.find(record, '\\n', 1, true)
  return cjson.decode(string.sub(record, 1, nl - 1)), string.sub(record, nl + 1)
end
local function join(header, definition)
  return cjson.encode(header) .. '\\n' .. definition
end
local function publish(channel, id)
  redis.call('PUBLISH', channel, id)
end
`;

/**
 * create(ARGV = id, handler, definition JSON, by, token, channel) → `{'ok', record}` or
 * `{'duplicate'}`. A tombstone is revived one version past it.
 */
export const CREATE_SCHEDULE = `${HELPERS}
local id, handler, definition, by, token = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local old = redis.call('HGET', KEYS[1], id)
local version = 1
if old then
  local h = split(old)
  if h[2] == 0 then
    if h[8] == token then return {'ok', old} end
    return {'duplicate'}
  end
  version = h[1] + 1
end
local now = now_ms()
local record = join({version, 0, now, by, now, by, handler, token}, definition)
redis.call('HSET', KEYS[1], id, record)
redis.call('ZADD', KEYS[2], 0, id)
redis.call('ZADD', KEYS[3], 0, handler .. ' ' .. id)
audit_append(now, tostring(version))
publish(ARGV[6], id)
return {'ok', record}
`;

/**
 * replace(ARGV = id, handler, definition JSON, by, token, expected version, channel) →
 * `{'ok', record}`, `{'unknown'}`, or `{'conflict', actual version | ''}` ('' when removed).
 */
export const REPLACE_SCHEDULE = `${HELPERS}
local id, handler, definition, by, token = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local expected = tonumber(ARGV[6])
local old = redis.call('HGET', KEYS[1], id)
if not old then return {'unknown'} end
local h = split(old)
if h[2] == 1 then return {'conflict', ''} end
if h[1] ~= expected then
  if h[1] == expected + 1 and h[8] == token then return {'ok', old} end
  return {'conflict', tostring(h[1])}
end
local now = now_ms()
local record = join({h[1] + 1, 0, h[3], h[4], now, by, handler, token}, definition)
redis.call('HSET', KEYS[1], id, record)
if h[7] ~= handler then
  redis.call('ZREM', KEYS[3], h[7] .. ' ' .. id)
  redis.call('ZADD', KEYS[3], 0, handler .. ' ' .. id)
end
audit_append(now, tostring(h[1] + 1))
publish(ARGV[7], id)
return {'ok', record}
`;

/**
 * remove(ARGV = id, by, token, expected version | '' (any), channel, the version the client's
 * audit record describes | '') → `{'ok', record as it was}`, `{'unknown'}` (never existed, or
 * removed and any version was asked), `{'conflict', actual version | ''}`, or `{'stale'}` when
 * the live version is not the one the audit record describes (the client reads and sends again).
 */
export const REMOVE_SCHEDULE = `${HELPERS}
local id, by, token, expected = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local old = redis.call('HGET', KEYS[1], id)
if not old then return {'unknown'} end
local h, definition = split(old)
if h[2] == 1 then
  if h[8] == token then
    return {'ok', join({h[1] - 1, 0, h[3], h[4], h[9], h[10], h[7], h[11]}, definition)}
  end
  if expected == '' then return {'unknown'} end
  return {'conflict', ''}
end
if expected ~= '' and h[1] ~= tonumber(expected) then return {'conflict', tostring(h[1])} end
if tostring(h[1]) ~= ARGV[6] then return {'stale'} end
local now = now_ms()
local tombstone = {h[1] + 1, 1, h[3], h[4], now, by, h[7], token, h[5], h[6], h[8]}
redis.call('HSET', KEYS[1], id, join(tombstone, definition))
redis.call('ZREM', KEYS[2], id)
redis.call('ZREM', KEYS[3], h[7] .. ' ' .. id)
audit_append(now, '')
publish(ARGV[5], id)
return {'ok', old}
`;

/**
 * list(KEYS = records, index (ids or by-handler); ARGV = min, max (ZRANGEBYLEX bounds), count,
 * characters before the id in a member) → `[id, record, id, record, …]`, by id.
 */
export const LIST_SCHEDULES = `
local members = redis.call('ZRANGEBYLEX', KEYS[2], ARGV[1], ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local skip = tonumber(ARGV[4])
local out = {}
for _, m in ipairs(members) do
  local id = string.sub(m, skip + 1)
  local record = redis.call('HGET', KEYS[1], id)
  if record then
    out[#out + 1] = id
    out[#out + 1] = record
  end
end
return out
`;
