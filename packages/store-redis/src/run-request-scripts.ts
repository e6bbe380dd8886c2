/**
 * Lua scripts of the run requests of {@link RedisStore}, all under the hash tag `{prefix}` (one
 * cluster slot). Each request is one entry of the records hash: a JSON object whose values are all
 * strings (`seq`, `id`, `job`, `requestedBy`, `requestedAt`, `data` as JSON text, `takes`, and once
 * set `takeId`, `takenBy`, `takenUntil`, `decidedAt`, `fireAt`, `decidedBy`), so no number goes
 * through Lua's 14-digit formatting. Times come from Redis `TIME`.
 */
import { AUDIT_PRUNE_BATCH, DECIDED_RUN_REQUEST_KEEP_MS } from '@fleetcron/core/backend';
import { auditAppend } from './audit-scripts.js';
import { NOW as REDIS_NOW } from './fleet-scripts.js';

/** The Redis clock in epoch ms (`now`) and `ms(n)`, an integer as its decimal text. */
const NOW = `${REDIS_NOW}local function ms(n) return string.format('%d', n) end
`;

/** Decided requests collected per take, at most (bounded work per call). */
export const COLLECT_PER_TAKE = 100;

/**
 * requestRun(KEYS = sequence, records, open set of the job, then the audit keys; ARGV = id, job,
 * requestedBy, data JSON, channel, then the audit args) → requestedAt. Stores the record, opens
 * it (score 0: takeable), appends the `run` audit entry and publishes the job name on the
 * channel. A re-send by ioredis after a reconnect finds the record (its id is a fresh UUID) and
 * answers its `requestedAt` without writing anything again.
 */
export const REQUEST_RUN = `${NOW}${auditAppend(AUDIT_PRUNE_BATCH)}
local existing = redis.call('HGET', KEYS[2], ARGV[1])
if existing then return cjson.decode(existing).requestedAt end
local seq = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode({
  seq = ms(seq), id = ARGV[1], job = ARGV[2], requestedBy = ARGV[3], requestedAt = ms(now),
  data = ARGV[4], takes = '0'
}))
redis.call('ZADD', KEYS[3], 0, ARGV[1])
audit_append(now, '')
redis.call('PUBLISH', ARGV[5], ARGV[2])
return now
`;

/**
 * take(KEYS = records, decided set, then per job: its open set, its 0.1.0 request list; ARGV =
 * leaseMs, instanceId, a fresh UUID) → the taken records (JSON), atomically. First collects up to
 * ${COLLECT_PER_TAKE} requests decided more than ${DECIDED_RUN_REQUEST_KEEP_MS} ms ago and moves
 * 0.1.0 list entries into records (pending, data null). Then every open request whose score (the
 * end of its last take) is at most now gets a new take: `takes` + 1, `takenBy`, `takenUntil` =
 * now + leaseMs (also its new score), `takeId` = the UUID with its last 8 hex digits replaced by
 * the take's index in this call (unique per take, 90 random bits left). Decided or collected
 * members met on the way are dropped from the open set.
 */
export const TAKE_RUN_REQUESTS = `${NOW}
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ms(now - ${DECIDED_RUN_REQUEST_KEEP_MS}),
  'LIMIT', 0, ${COLLECT_PER_TAKE})
for _, id in ipairs(old) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
end
local takenUntil = ms(now + tonumber(ARGV[1]))
local out = {}
for j = 3, #KEYS, 2 do
  local open, legacy = KEYS[j], KEYS[j + 1]
  for _, e in ipairs(redis.call('LRANGE', legacy, 0, -1)) do
    local a = string.find(e, '|', 1, true)
    local b = string.find(e, '|', a + 1, true)
    local r = cjson.decode(string.sub(e, b + 1))
    redis.call('HSET', KEYS[1], r[1], cjson.encode({
      seq = string.sub(e, 1, a - 1), id = r[1], job = r[2], requestedBy = r[3],
      requestedAt = string.sub(e, a + 1, b - 1), data = 'null', takes = '0'
    }))
    redis.call('ZADD', open, 0, r[1])
  end
  redis.call('DEL', legacy)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', open, '-inf', ms(now))) do
    local raw = redis.call('HGET', KEYS[1], id)
    local rec = raw and cjson.decode(raw)
    if not rec or rec.decidedAt then
      redis.call('ZREM', open, id)
    else
      rec.takes = ms(tonumber(rec.takes) + 1)
      rec.takeId = string.sub(ARGV[3], 1, 28) .. string.format('%08x', #out)
      rec.takenBy = ARGV[2]
      rec.takenUntil = takenUntil
      local encoded = cjson.encode(rec)
      redis.call('HSET', KEYS[1], id, encoded)
      redis.call('ZADD', open, takenUntil, id)
      out[#out + 1] = encoded
    end
  end
end
return out
`;

/**
 * decide(KEYS = records, decided set; ARGV = id, takeId, fireAt, decidedBy) → 1 when this take
 * decides the request or had decided it already, 0 otherwise (another take, unknown id). The open
 * set keeps the id until a take meets it (its score is the take's end), which drops it.
 */
export const DECIDE_RUN_REQUEST = `${NOW}
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local rec = cjson.decode(raw)
if rec.takeId ~= ARGV[2] then return 0 end
if rec.decidedAt then return 1 end
rec.decidedAt = ms(now)
rec.fireAt = ARGV[3]
rec.decidedBy = ARGV[4]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(rec))
redis.call('ZADD', KEYS[2], ms(now), ARGV[1])
return 1
`;

/**
 * release(KEYS = records, open set of the job; ARGV = id, takeId, job, channel) → 1 when the
 * request was given back (takeable at once, its job published on the channel), 0 when it was not
 * this take's or is decided (a no-op).
 */
export const RELEASE_RUN_REQUEST = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local rec = cjson.decode(raw)
if rec.takeId ~= ARGV[2] or rec.decidedAt or rec.job ~= ARGV[3] then return 0 end
rec.takenUntil = nil
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(rec))
redis.call('ZADD', KEYS[2], 0, ARGV[1])
redis.call('PUBLISH', ARGV[4], ARGV[3])
return 1
`;

/** get(KEYS = records; ARGV = id) → [now, record JSON or ''] (the phase needs the Redis clock). */
export const GET_RUN_REQUEST = `${NOW}
local raw = redis.call('HGET', KEYS[1], ARGV[1])
return {now, raw or ''}
`;
