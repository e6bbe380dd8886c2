/**
 * The audit log of {@link RedisStore} in Lua: {@link AUDIT_APPEND} is part of every mutation's
 * script (pause, run request, stored-schedule writes), so an entry is written in the same atomic
 * step as its mutation or not at all. All keys are under the hash tag `{prefix}` (`AuditKeys`).
 *
 * An entry is a sequence number `seq` (its id; `INCR` of the sequence key) in the log sorted set
 * and in its job's sorted set (score and member both `seq`: newest first is highest score first),
 * and a value in the entries hash: `<at>|<version>|<length of the job set's key>|<job set's
 * key><record JSON>`. `at` is the Redis clock; `version` is what the script knows of a stored
 * schedule's version after the change (`''` when the record carries it); the record JSON is
 * core's `AuditRecord`, written by the client and never parsed here.
 */

/** The audit KEYS every mutation script ends with, in order (see {@link AUDIT_APPEND}). */
export const AUDIT_KEY_COUNT = 4;
/** The audit ARGV every mutation script ends with, in order (see {@link AUDIT_APPEND}). */
export const AUDIT_ARG_COUNT = 3;

/**
 * `audit_append(now, version)`: appends the entry whose KEYS are the script's last
 * {@link AUDIT_KEY_COUNT} (log, entries, sequence, the job's set) and ARGV its last
 * {@link AUDIT_ARG_COUNT} (record JSON, maxEntries, maxAgeMs), then prunes at most `batch`
 * oldest entries that are beyond `maxEntries` or older than `maxAgeMs` (bounded work per
 * append). A pruned entry's job set is named in its value: it shares the hash tag, so the script
 * may touch it on a Cluster although it is not among KEYS.
 */
export function auditAppend(batch: number): string {
  return `
local function audit_append(now, version)
  local nk, na = #KEYS, #ARGV
  local log, entries, sequence, jobSet = KEYS[nk - 3], KEYS[nk - 2], KEYS[nk - 1], KEYS[nk]
  local maxEntries, maxAge = tonumber(ARGV[na - 1]), tonumber(ARGV[na])
  local seq = redis.call('INCR', sequence)
  redis.call('HSET', entries, seq,
    string.format('%d', now) .. '|' .. version .. '|' .. #jobSet .. '|' .. jobSet .. ARGV[na - 2])
  redis.call('ZADD', log, seq, seq)
  redis.call('ZADD', jobSet, seq, seq)
  local excess = redis.call('ZCARD', log) - maxEntries
  local oldest = redis.call('ZRANGE', log, 0, ${batch - 1})
  for _, old in ipairs(oldest) do
    local value = redis.call('HGET', entries, old)
    local a = value and string.find(value, '|', 1, true)
    local at = a and tonumber(string.sub(value, 1, a - 1))
    if excess <= 0 and at and at >= now - maxAge then break end
    if value then
      local b = string.find(value, '|', a + 1, true)
      local c = string.find(value, '|', b + 1, true)
      local length = tonumber(string.sub(value, b + 1, c - 1))
      redis.call('ZREM', string.sub(value, c + 1, c + length), old)
      redis.call('HDEL', entries, old)
    end
    redis.call('ZREM', log, old)
    excess = excess - 1
  end
  return seq
end
`;
}

/**
 * list(KEYS = a sorted set of entries (the log or a job's), entries; ARGV = highest score
 * (`+inf` or `(<seq>`), count) → `[seq, value, seq, value, …]`, newest first.
 */
export const LIST_AUDIT = `
local seqs = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[1], '-inf', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, seq in ipairs(seqs) do
  local value = redis.call('HGET', KEYS[2], seq)
  if value then
    out[#out + 1] = seq
    out[#out + 1] = value
  end
end
return out
`;
