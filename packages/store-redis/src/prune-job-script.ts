import { DROP } from './scripts.js';

/**
 * pruneJob(KEYS = index, executions; ARGV = keepLast ('' for none), age bound ('' for none, else
 * `startedAt` as 16 digits: members below it started before), limit) → how many were deleted.
 * Reads the index oldest first (rank order is `(startedAt, id)` order) in chunks of `limit`,
 * stops at the first member that is neither beyond the newest `keepLast` nor below the age bound,
 * skips `running` rows, and drops at most `limit` members with their executions. One script:
 * atomic, and its work bounded by `limit` plus the running rows it skips.
 */
export const PRUNE_JOB = `${DROP}
local idx, execs = KEYS[1], KEYS[2]
local bound, limit = ARGV[2], tonumber(ARGV[3])
local beyond = 0
if ARGV[1] ~= '' then beyond = redis.call('ZCARD', idx) - tonumber(ARGV[1]) end
local doomed = {}
local rank = 0
while #doomed < limit do
  local members = redis.call('ZRANGE', idx, rank, rank + limit - 1)
  if #members == 0 then break end
  for _, m in ipairs(members) do
    if rank >= beyond and (bound == '' or string.sub(m, 1, 16) >= bound) then
      return drop(idx, execs, doomed)
    end
    local v = redis.call('HGET', execs, string.sub(m, 18))
    if not v or cjson.decode(string.sub(v, 17)).status ~= 'running' then
      doomed[#doomed + 1] = m
      if #doomed >= limit then break end
    end
    rank = rank + 1
  end
end
return drop(idx, execs, doomed)
`;
