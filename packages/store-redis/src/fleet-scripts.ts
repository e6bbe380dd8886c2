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
 * setPaused(KEYS = state; ARGV = '1'|'0', by|'') → 1. Pausing stamps `pausedBy` and `pausedAt`
 * (Redis clock); resuming clears them.
 */
export const SET_PAUSED = `${NOW}
if ARGV[1] == '1' then
  redis.call('HSET', KEYS[1], 'paused', '1', 'pausedAt', now)
  if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'pausedBy', ARGV[2])
  else redis.call('HDEL', KEYS[1], 'pausedBy') end
else
  redis.call('HSET', KEYS[1], 'paused', '0')
  redis.call('HDEL', KEYS[1], 'pausedBy', 'pausedAt')
end
return 1
`;
