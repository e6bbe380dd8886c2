import { AUDIT_PRUNE_BATCH } from '@fleetcron/core/backend';
import { auditAppend } from './audit-scripts.js';
import { WRITE_TOKEN_TTL_MS } from './keys.js';

/**
 * Lua scripts of the fleet-control part of {@link RedisStore}: the instance registry (under the
 * hash tag `{prefix}`) and a job's pause state. Times come from Redis `TIME`. Run requests have
 * their own scripts (`run-request-scripts.ts`).
 */

/** Lua that sets `now`: the Redis clock in epoch ms. */
export const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * Drops expired entries of the instances hash (values `<lastSeenAt>|<heartbeatMs>|<record>`)
 * and returns the live ones as a flat list `lastSeenAt, record, ...`.
 */
const COLLECT = `
local function collect(key, now, keep)
  local all = redis.call('HGETALL', key)
  local live = {}
  for i = 1, #all, 2 do
    local v = all[i + 1]
    local a = string.find(v, '|', 1, true)
    local b = string.find(v, '|', a + 1, true)
    local seen = tonumber(string.sub(v, 1, a - 1))
    local every = tonumber(string.sub(v, a + 1, b - 1))
    if now - seen > 3 * every and all[i] ~= keep then
      redis.call('HDEL', key, all[i])
    else
      live[#live + 1] = all[i]
      live[#live + 1] = string.sub(v, 1, a - 1)
      live[#live + 1] = string.sub(v, b + 1)
    end
  end
  return live
end
`;

/** heartbeat(KEYS = instances; ARGV = instanceId, heartbeatMs, record JSON) → lastSeenAt. */
export const HEARTBEAT = `${NOW}${COLLECT}
collect(KEYS[1], now, ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], now .. '|' .. ARGV[2] .. '|' .. ARGV[3])
return now
`;

/** instances(KEYS = instances) → flat list `instanceId, lastSeenAt, record, ...` of live ones. */
export const INSTANCES = `${NOW}${COLLECT}
return collect(KEYS[1], now, '')
`;

/**
 * setPaused(KEYS = the fleet's pause hash, the call's write token, then the audit keys; ARGV =
 * job, '1'|'0', by|'', then the audit args) → 1, or 0 for a re-send that finds its token (it
 * wrote already). Pausing stores `1|<pausedAt>|<pausedBy>` (Redis clock), resuming `0`, and the
 * audit entry is appended in the same script.
 */
export const SET_PAUSED = `${NOW}${auditAppend(AUDIT_PRUNE_BATCH)}
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ${WRITE_TOKEN_TTL_MS}) then return 0 end
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[1], ARGV[1], '1|' .. string.format('%d', now) .. '|' .. ARGV[3])
else
  redis.call('HSET', KEYS[1], ARGV[1], '0')
end
audit_append(now, '')
return 1
`;
