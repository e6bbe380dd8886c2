/**
 * The Lua scripts of {@link RedisStore}. Each runs atomically and touches only the keys it
 * declares, which share one hash tag (Redis Cluster compatible). Index members are
 * `<startedAt 16 digits>:<id>` with score 0; execution values start with the same 16 digits.
 */

/** Drops index members (and their executions) in ascending order; used by trims and prune. */
export const DROP = `
local function drop(idx, execs, members)
  for _, m in ipairs(members) do redis.call('HDEL', execs, string.sub(m, 18)) end
  for i = 1, #members, 500 do
    redis.call('ZREM', idx, unpack(members, i, math.min(i + 499, #members)))
  end
  return #members
end
`;

/**
 * `record(idx, execs, state, id, member, value, terminal, status, fireAt, finishedAt,
 * maxHistory, maxAge)` → 1, or 0 when refused: a terminal execution is never changed again (the
 * first outcome wins; a late start or a second outcome is dropped). Upserts the execution (moving
 * its index member if startedAt changed), updates the job state for terminal statuses, then
 * trims to maxHistory and (with maxAge, '' when unset) by age on the Redis clock, and lets the
 * job's history keys expire maxAge ms after the last record. Shared by {@link RECORD} and
 * {@link RECORD_MANY}, so a batch writes exactly as single records do.
 */
const RECORD_FUNCTION = `${DROP}
local function record(idx, execs, state, id, member, value, terminal, status, fireAt,
                      finishedAt, maxHistory, maxAge)
  local old = redis.call('HGET', execs, id)
  if old and cjson.decode(string.sub(old, 17)).status ~= 'running' then
    return 0
  end
  if old then
    local oldMember = string.sub(old, 1, 16) .. ':' .. id
    if oldMember ~= member then redis.call('ZREM', idx, oldMember) end
  end
  redis.call('HSET', execs, id, value)
  redis.call('ZADD', idx, 0, member)
  if terminal == '1' then
    redis.call('HSET', state, 'lastStatus', status, 'lastFireAt', fireAt, 'lastFinishedAt', finishedAt)
  end
  local limit = tonumber(maxHistory)
  local n = redis.call('ZCARD', idx)
  if n > limit then
    drop(idx, execs, redis.call('ZRANGE', idx, 0, n - limit - 1))
  end
  if maxAge ~= '' then
    local age = tonumber(maxAge)
    local t = redis.call('TIME')
    local cutoff = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - age
    if cutoff > 0 then
      drop(idx, execs, redis.call('ZRANGEBYLEX', idx, '-', '(' .. string.format('%016d', cutoff)))
    end
    redis.call('PEXPIRE', idx, age)
    redis.call('PEXPIRE', execs, age)
  end
  return 1
end
`;

/**
 * record(KEYS = index, executions, state; ARGV = id, member, value, terminal '1'|'0', status,
 * fireAt, finishedAt|'' , maxHistory, maxAgeMs|'') → 1, or 0 when refused (see the `record`
 * function above).
 */
export const RECORD = `${RECORD_FUNCTION}
return record(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6],
              ARGV[7], ARGV[8], ARGV[9])
`;

/** Values {@link RECORD_MANY} takes per execution, after its two shared ones. */
export const RECORD_MANY_ARGS = 7;

/**
 * recordMany(KEYS = index, executions, state per execution; ARGV = maxHistory, maxAgeMs|'', then
 * per execution: id, member, value, terminal, status, fireAt, finishedAt|'') → how many were
 * written. Runs the `record` function of {@link RECORD} on each execution in order, so a batch is
 * exactly the single records one after the other (several of one id included). On a Cluster
 * every key of one call is in one hash slot.
 */
export const RECORD_MANY = `${RECORD_FUNCTION}
local written = 0
for i = 0, #KEYS / 3 - 1 do
  local a = 2 + i * ${RECORD_MANY_ARGS}
  written = written + record(KEYS[i * 3 + 1], KEYS[i * 3 + 2], KEYS[i * 3 + 3], ARGV[a + 1],
    ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7], ARGV[1], ARGV[2])
end
return written
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
