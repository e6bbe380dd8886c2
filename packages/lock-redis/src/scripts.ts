/**
 * The Lua scripts of {@link RedisLock}. Each runs atomically on the server (Redis executes a
 * script to completion before any other command), reads the time with `TIME` (the Redis
 * clock judges staleness and expiry; Redis >= 5 replicates a script's effects, not the script,
 * so a non-deterministic `TIME` is allowed) and touches only keys of one hash tag (Redis
 * Cluster compatible): claim, extend and release declare every key they touch; inspect also
 * reads the per-fire keys its index lists, which live in the same slot.
 *
 * Layout (see keys.ts):
 * - KEYS fire (`...:f:<fireAt>`): STRING `w|token|owner` or `b||owner`, PEXPIREAT fireAt+window+1.
 * - KEYS fires: ZSET index of the fire keys, score = member = fireAt.
 * - KEYS leases: HASH, field = `x` (exclusive slot) or `<fireAt>` (per-fire slot),
 *   value = `token|expiresAt|fireAt|owner`.
 * - KEYS token: STRING, the last fencing token issued (no TTL).
 * - KEYS mark: STRING, the catch-up mark: the newest fire ever recorded (no TTL, never decreases).
 *
 * Numbers are passed and returned as decimal strings and formatted with `%d`: Lua numbers are
 * doubles, exact for the integers used here (< 2^53), but `tostring` would switch to exponent
 * notation past 14 digits.
 */

const COMMON = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function fmt(n) return string.format('%d', n) end
local function parseLease(v)
  local tok, exp, fa, own = string.match(v, '^(%d+)|(%-?%d+)|(%-?%d+)|(.*)$')
  return tok, tonumber(exp), fa, own
end
`;

/**
 * claim(KEYS = fire, fires, leases, token, mark per request; ARGV = windowMs, earlyMs, then
 * fireAt, owner, leaseMs, exclusive '1'|'0', since per request) → one reply string per request,
 * in order: `W|token|expiresAt|exclusive 1/0|now`, `B|now` or `L|reason|now` (one flat string:
 * turning a nested Lua table into a reply costs the server about 1 µs per claim). The same script claims one fire (`claim`) or a batch (`claimMany`, every
 * key in one hash slot); requests are applied in array order, all judged by one `TIME`, so two
 * requests of one job see each other. `now` is the Redis clock (`TIME`) the claims were judged
 * by. A fire with no record more than `earlyMs` ahead of it is refused `early` (nothing
 * written). `since` is empty for an ordinary claim; for a catch-up claim it replaces the window
 * as the staleness bound, and a fire at or behind the mark is refused `behind_mark` (a re-sent
 * catch-up claim of the mark's fire gets the owner's live lease of it instead). Every recorded
 * fire (won or busy) moves the mark forward.
 */
export const CLAIM = `${COMMON}
local window, earlyMs = tonumber(ARGV[1]), tonumber(ARGV[2])
local nowText = fmt(now)

local function liveLease(leases, slot)
  local v = redis.call('HGET', leases, slot)
  if not v then return nil end
  local tok, exp = parseLease(v)
  if exp == nil or exp <= now then return nil end
  return tok, exp
end

-- Records the fire: its own key, expiring by itself 1 ms after fireAt + window (Redis deletes a
-- key at once when PEXPIREAT is not in the future), plus the index inspect() reads, which
-- expires with the newest fire ever recorded (the mark, never older than an indexed fire). The
-- record, the new token (tok, when the fire was won) and the mark moving forward are written by
-- one MSET: the keys share the job's hash tag, so this is one command even on a Cluster.
local function recordFire(k, fireAt, fireAtText, mark, value, tok)
  local fireKey, fires = KEYS[k], KEYS[k + 1]
  local moveMark = not mark or fireAt > mark
  if tok and moveMark then
    redis.call('MSET', fireKey, value, KEYS[k + 3], tok, KEYS[k + 4], fireAtText)
  elseif tok then
    redis.call('MSET', fireKey, value, KEYS[k + 3], tok)
  elseif moveMark then
    redis.call('MSET', fireKey, value, KEYS[k + 4], fireAtText)
  else
    redis.call('SET', fireKey, value)
  end
  redis.call('PEXPIREAT', fireKey, fmt(fireAt + window + 1))
  redis.call('ZREMRANGEBYSCORE', fires, '-inf', '(' .. fmt(now - window))
  redis.call('ZADD', fires, fireAtText, fireAtText)
  local newest = fireAt
  if mark then
    if mark > fireAt then newest = mark end
  else
    newest = tonumber(redis.call('ZRANGE', fires, -1, -1, 'WITHSCORES')[2])
  end
  redis.call('PEXPIREAT', fires, fmt(newest + window + 1))
end

local function claim(k, a)
  local leases = KEYS[k + 2]
  local fireAtText, owner = ARGV[a], ARGV[a + 1]
  local fireAt = tonumber(fireAtText)
  local since = tonumber(ARGV[a + 4])

  -- A record older than the window counts as collected (its key may outlive it by 1 ms).
  -- Catch-up claims are bounded by their since instead (the mark guards them).
  if fireAt < (since or now - window) then return 'L|stale|' .. nowText end

  -- An existing record: replay for the same owner, lost for anyone else.
  -- (The record is outcome|token|owner: one letter, digits, then the owner, '|' included.)
  local record = redis.call('GET', KEYS[k])
  if record then
    local bar = string.find(record, '|', 3, true)
    if string.sub(record, bar + 1) ~= owner then return 'L|claimed|' .. nowText end
    if string.byte(record, 1) == 98 then return 'B|' .. nowText end -- 'b': busy
    local recTok = string.sub(record, 3, bar - 1)
    local tok, exp = liveLease(leases, 'x')
    if tok == recTok then return 'W|' .. tok .. '|' .. fmt(exp) .. '|1|' .. nowText end
    tok, exp = liveLease(leases, fireAtText)
    if tok == recTok then return 'W|' .. tok .. '|' .. fmt(exp) .. '|0|' .. nowText end
    return 'L|claimed|' .. nowText
  end

  if fireAt > now + earlyMs then return 'L|early|' .. nowText end

  -- The mark and the last token in one MGET (same hash tag); a missing key reads as false.
  local stored = redis.call('MGET', KEYS[k + 4], KEYS[k + 3])
  local mark = tonumber(stored[1])
  if since and mark and fireAt <= mark then
    -- A re-sent catch-up claim whose record is gone: the owner's live lease of the mark's fire.
    if fireAt == mark then
      for _, slot in ipairs({'x', fireAtText}) do
        local v = redis.call('HGET', leases, slot)
        if v then
          local tok, exp, fa, own = parseLease(v)
          if exp ~= nil and exp > now and fa == fireAtText and own == owner then
            return 'W|' .. tok .. '|' .. fmt(exp) .. (slot == 'x' and '|1|' or '|0|') .. nowText
          end
        end
      end
    end
    return 'L|behind_mark|' .. nowText
  end

  -- One HGETALL serves the exclusive check, the collection of expired leases and the hash's
  -- expiry.
  local exclusive = ARGV[a + 3] == '1'
  local all = redis.call('HGETALL', leases)
  local leaseExp = {}
  for i = 1, #all, 2 do
    local _, exp = parseLease(all[i + 1])
    leaseExp[i] = exp
    if exclusive and all[i] == 'x' and exp ~= nil and exp > now then
      recordFire(k, fireAt, fireAtText, mark, 'b||' .. owner, nil)
      return 'B|' .. nowText
    end
  end

  -- token = max(last + 1, Redis time in microseconds): strictly increasing per key, and still
  -- increasing when the counter is lost (restart without persistence, failover to a replica
  -- that missed it), as long as the server clock does not step back.
  local token = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = tonumber(stored[2]) or 0
  if last + 1 > token then token = last + 1 end
  local tok = fmt(token)

  -- The lease; expired slots are dropped, and the hash expires with its longest live lease.
  local expiresAt = now + tonumber(ARGV[a + 2])
  local maxExp = expiresAt
  for i = 1, #all, 2 do
    local exp = leaseExp[i]
    if exp == nil or exp <= now then
      redis.call('HDEL', leases, all[i])
    elseif exp > maxExp then
      maxExp = exp
    end
  end
  local slot = exclusive and 'x' or fireAtText
  redis.call('HSET', leases, slot, tok .. '|' .. fmt(expiresAt) .. '|' .. fireAtText .. '|' .. owner)
  redis.call('PEXPIREAT', leases, fmt(maxExp))

  recordFire(k, fireAt, fireAtText, mark, 'w|' .. tok .. '|' .. owner, tok)
  return 'W|' .. tok .. '|' .. fmt(expiresAt) .. (exclusive and '|1|' or '|0|') .. nowText
end

local replies = {}
for i = 0, #KEYS / 5 - 1 do replies[i + 1] = claim(i * 5 + 1, i * 5 + 3) end
return replies
`;

/**
 * extend(KEYS = leases per request; ARGV = slot, token, leaseMs per request) → one reply per
 * request, in order: {expiresAt, owner, now}, or false (nil to the client) when the slot no
 * longer holds a live lease with that token. One request for `extend`, a batch of one hash
 * slot for `extendMany`.
 */
export const EXTEND = `${COMMON}
local function extend(leases, slot, token, leaseMs)
  local v = redis.call('HGET', leases, slot)
  if not v then return false end
  local tok, exp, fa, own = parseLease(v)
  if tok ~= token or exp == nil or exp <= now then return false end
  local expiresAt = now + leaseMs
  redis.call('HSET', leases, slot, tok .. '|' .. fmt(expiresAt) .. '|' .. fa .. '|' .. own)
  local maxExp = expiresAt
  local all = redis.call('HGETALL', leases)
  for i = 2, #all, 2 do
    local _, e = parseLease(all[i])
    if e ~= nil and e > maxExp then maxExp = e end
  end
  redis.call('PEXPIREAT', leases, fmt(maxExp))
  return {fmt(expiresAt), own, fmt(now)}
end
local replies = {}
for i = 1, #KEYS do
  local a = i * 3 - 2
  replies[i] = extend(KEYS[i], ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2]))
end
return replies
`;

/**
 * release(KEYS = leases per request; ARGV = slot, token per request) → one reply per request, in
 * order: 1 when the lease was held and live, else 0. Deletes the slot only when it holds
 * `token`; never touches the claim record. One request for `release`, a batch of one hash slot
 * for `releaseMany`.
 */
export const RELEASE = `${COMMON}
local function release(leases, slot, token)
  local v = redis.call('HGET', leases, slot)
  if not v then return 0 end
  local tok, exp = parseLease(v)
  if tok ~= token then return 0 end
  redis.call('HDEL', leases, slot)
  if exp ~= nil and exp > now then return 1 end
  return 0
end
local replies = {}
for i = 1, #KEYS do replies[i] = release(KEYS[i], ARGV[i * 2 - 1], ARGV[i * 2]) end
return replies
`;

/**
 * inspect(KEYS = fires, leases, mark; ARGV = windowMs) → {records as
 * `fireAt|value`, oldest first; live leases as a flat field/value list; the mark or ''}. Read-only: filters by
 * the Redis clock instead of collecting. Reads the fire keys it finds in the index (same hash
 * slot as the declared keys, so this works on a Cluster); their names are derived from the
 * declared `...:fires` key, so a client-side ioredis `keyPrefix` applies to them too.
 */
export const INSPECT = `${COMMON}
local window = tonumber(ARGV[1])
local firePrefix = string.sub(KEYS[1], 1, -6) .. 'f:'
local records = {}
local indexed = redis.call('ZRANGEBYSCORE', KEYS[1], fmt(now - window), '+inf')
for _, fa in ipairs(indexed) do
  local v = redis.call('GET', firePrefix .. fa)
  if v then records[#records + 1] = fa .. '|' .. v end
end
local live = {}
local all = redis.call('HGETALL', KEYS[2])
for i = 2, #all, 2 do
  local _, exp = parseLease(all[i])
  if exp ~= nil and exp > now then
    live[#live + 1] = all[i - 1]
    live[#live + 1] = all[i]
  end
end
return {records, live, redis.call('GET', KEYS[3]) or ''}
`;

/**
 * withdraw(KEYS = fire, fires, leases; ARGV = fireAt, slot, token) → 1 when withdrawn, else 0.
 * Hands back a won claim its owner will never run: deletes the fire's claim record (and its
 * index entry) only when the record is a win with `token`, and the lease slot only when it still
 * holds `token`. The token counter is untouched, so the next claim of the fire gets a higher one.
 */
export const WITHDRAW = `
local fireKey, fires, leases = KEYS[1], KEYS[2], KEYS[3]
local fireAtText, slot, token = ARGV[1], ARGV[2], ARGV[3]
local record = redis.call('GET', fireKey)
if not record then return 0 end
local outcome, recTok = string.match(record, '^(%a)|(%d*)|')
if outcome ~= 'w' or recTok ~= token then return 0 end
redis.call('DEL', fireKey)
redis.call('ZREM', fires, fireAtText)
local v = redis.call('HGET', leases, slot)
if v and string.match(v, '^(%d+)|') == token then redis.call('HDEL', leases, slot) end
return 1
`;
