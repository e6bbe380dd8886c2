/**
 * The Lua scripts of {@link RedisStore}. Each runs atomically and touches only the keys it
 * declares, which share one hash tag (Redis Cluster compatible). Index members are
 * `<startedAt 16 digits>:<id>` with score 0; execution values start with the same 16 digits.
 */

/** Drops index members (and their executions) in ascending order; used by trims and prune. */
const DROP = `
local function drop(idx, execs, members)
  for _, m in ipairs(members) do redis.call('HDEL', execs, string.sub(m, 18)) end
  for i = 1, #members, 500 do
    redis.call('ZREM', idx, unpack(members, i, math.min(i + 499, #members)))
  end
  return #members
end
`;

/**
 * record(KEYS = index, executions, state; ARGV = id, member, value, terminal '1'|'0', status,
 * fireAt, finishedAt|'' , maxHistory, maxAgeMs|'') → 1, or 0 when refused: a terminal execution
 * is never changed again (the first outcome wins; a late start or a second outcome is dropped).
 * Upserts the execution (moving its index member if startedAt changed), updates the job state
 * for terminal statuses, then trims to maxHistory and (with maxAgeMs) by age on the Redis
 * clock, and lets the job's history keys expire maxAgeMs after the last record.
 */
export const RECORD = `${DROP}
local idx, execs, state = KEYS[1], KEYS[2], KEYS[3]
local id, member = ARGV[1], ARGV[2]
local old = redis.call('HGET', execs, id)
if old and cjson.decode(string.sub(old, 17)).status ~= 'running' then
  return 0
end
if old then
  local oldMember = string.sub(old, 1, 16) .. ':' .. id
  if oldMember ~= member then redis.call('ZREM', idx, oldMember) end
end
redis.call('HSET', execs, id, ARGV[3])
redis.call('ZADD', idx, 0, member)
if ARGV[4] == '1' then
  redis.call('HSET', state, 'lastStatus', ARGV[5], 'lastFireAt', ARGV[6], 'lastFinishedAt', ARGV[7])
end
local maxHistory = tonumber(ARGV[8])
local n = redis.call('ZCARD', idx)
if n > maxHistory then
  drop(idx, execs, redis.call('ZRANGE', idx, 0, n - maxHistory - 1))
end
if ARGV[9] ~= '' then
  local maxAge = tonumber(ARGV[9])
  local t = redis.call('TIME')
  local cutoff = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - maxAge
  if cutoff > 0 then
    drop(idx, execs, redis.call('ZRANGEBYLEX', idx, '-', '(' .. string.format('%016d', cutoff)))
  end
  redis.call('PEXPIRE', idx, maxAge)
  redis.call('PEXPIRE', execs, maxAge)
end
return 1
`;

/**
 * history(KEYS = index, executions; ARGV = start bound ('+' or '(<member>'), count) → values,
 * newest first.
 */
export const HISTORY = `
local members = redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[1], '-', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, m in ipairs(members) do
  local v = redis.call('HGET', KEYS[2], string.sub(m, 18))
  if v then out[#out + 1] = v end
end
return out
`;

/** prune(KEYS = index, executions; ARGV = exclusive upper bound '(<16 digits>') → count. */
export const PRUNE = `${DROP}
return drop(KEYS[1], KEYS[2], redis.call('ZRANGEBYLEX', KEYS[1], '-', ARGV[1]))
`;
