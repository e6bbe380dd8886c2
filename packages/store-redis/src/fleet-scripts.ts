/**
 * Lua scripts of the fleet-control part of {@link RedisStore}: the instance registry and run
 * requests, all under the hash tag `{prefix}` (one cluster slot). Times come from Redis `TIME`.
 */

/** The Redis clock in epoch ms. */
const NOW = `
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
 * requestRun(KEYS = sequence, request list of the job; ARGV = id, job, requestedBy, channel)
 * → requestedAt. Appends `<seq>|<requestedAt>|<JSON [id, job, requestedBy]>` and publishes the
 * job name on the channel.
 */
export const REQUEST_RUN = `${NOW}
local seq = redis.call('INCR', KEYS[1])
redis.call('RPUSH', KEYS[2], seq .. '|' .. now .. '|' .. cjson.encode({ARGV[1], ARGV[2], ARGV[3]}))
redis.call('PUBLISH', ARGV[4], ARGV[2])
return now
`;

/** take(KEYS = request lists) → every entry of those lists, which are deleted, atomically. */
export const TAKE_RUN_REQUESTS = `
local out = {}
for _, key in ipairs(KEYS) do
  local entries = redis.call('LRANGE', key, 0, -1)
  if #entries > 0 then
    redis.call('DEL', key)
    for _, e in ipairs(entries) do out[#out + 1] = e end
  end
end
return out
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
