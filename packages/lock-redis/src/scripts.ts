/**
 * The Lua scripts of {@link RedisLock}. Each runs atomically on the server (Redis executes a
 * script to completion before any other command), reads the time with `TIME` (the Redis
 * clock judges staleness and expiry; Redis >= 5 replicates a script's effects, not the script,
 * so a non-deterministic `TIME` is allowed) and touches only keys of one hash tag (Redis
 * Cluster compatible).
 *
 * Layout 2 (see keys.ts), per job:
 * - KEYS fire (`...:f:<fireAt>`): STRING `w|token|owner` or `b||owner`, the claim record of one
 *   fire, expiring at fireAt + window + 1 (as in layout 1: same name, same value).
 * - KEYS fires (`...:fires`): ZSET index of the claim records, score = member = fireAt (as in
 *   layout 1).
 * - KEYS job (`...:j`): HASH. `t` the last fencing token; `m` the catch-up mark (the newest fire
 *   ever recorded, never decreases); `x` the exclusive lease and `<fireAt>` the per-fire leases,
 *   each `token|expiresAt|fireAt|owner`. No expiry (expired leases are dropped by the next
 *   claim of the job).
 *
 * Layout 1 kept the token, the mark and the leases in `...:token`, `...:mark` and `...:leases`.
 * Layout 2 only reads the first two, by names derived from the declared `...:fires` key (same
 * hash tag, so the same slot): see {@link CLAIM}.
 *
 * Numbers are passed and returned as decimal strings and formatted with `%d`: Lua numbers are
 * doubles, exact for the integers used here (< 2^53), but `tostring` would switch to exponent
 * notation past 14 digits.
 */

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function fmt(n) return string.format('%d', n) end
local nowText = fmt(now)
`;

/**
 * claim(KEYS = fire, fires, job per request; ARGV = windowMs, earlyMs, requests) → one reply
 * string for the whole call: `<now>` then, per request in order, `|` and its answer: `X<token>,
 * <expiresAt>` (won, exclusive), `W<token>,<expiresAt>` (won, per-fire lease), `B` (busy) or
 * `L<reason>` (lost). `requests` packs every request's arguments into one string (fewer
 * arguments for the client to write and the server to hand to Lua): per request
 * `<fireAt>|<lease>|<since>|<owner bytes>:<owner>`, or `<fireAt>|<lease>|<since>|:` for the
 * owner of the request before; lease is `x<ms>` for an exclusive claim, `<ms>` otherwise; since
 * is empty except for catch-up claims. Requests are applied in array order, all judged by one
 * `TIME` (`now`), so two requests of one job see each other.
 *
 * The checks in order (README, "The claim script"): stale; an existing record (lost for another
 * owner, replay for its owner); early; the catch-up mark; the exclusive slot (busy); else won.
 * A loser decides with one `GET`. A won claim makes 8 `redis.call`s: `TIME` (shared by the
 * call), `GET` the record, `HGETALL` the job, `HSET` token, lease and mark, `SET` the record
 * with its expiry, `ZREMRANGEBYSCORE` + `ZADD` + `PEXPIREAT` the index; plus `HDEL` when
 * expired leases are dropped, and `MGET` on a job's first record.
 *
 * Layout 1 → 2: a job's hash without a mark takes over the layout-1 mark and token (`MGET`,
 * the larger of each); a catch-up claim also reads the layout-1 mark (`GET`), so a fire that a
 * layout-1 instance recorded during a rolling upgrade is never caught up again. Records and
 * the index are the same keys in both layouts, so both see every record: one winner per fire.
 * The stored data is the same whatever the argument and reply packing (only the SHA differs).
 */
export const CLAIM = `${NOW}
local window, earlyMs, packed = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]

-- The expiry text of lease value v when it holds token tok and is live, else nil.
local function liveWith(v, tok)
  if not v then return nil end
  local vt, exp = string.match(v, '^(%d+)|(%-?%d+)|')
  if vt == tok and tonumber(exp) > now then return exp end
  return nil
end

local function decide(fireKey, fires, job, fireAtText, lease, since, owner)
  local fireAt = tonumber(fireAtText)

  -- A record older than the window counts as collected (its key may outlive it by 1 ms).
  -- Catch-up claims are bounded by their since instead (the mark guards them).
  if fireAt < (since or now - window) then return 'Lstale' end

  -- An existing record (outcome|token|owner): replay for its owner, lost for anyone else.
  local record = redis.call('GET', fireKey)
  if record then
    local bar = string.find(record, '|', 3, true)
    if string.sub(record, bar + 1) ~= owner then return 'Lclaimed' end
    if string.byte(record, 1) == 98 then return 'B' end -- 'b': busy
    local recTok = string.sub(record, 3, bar - 1)
    local held = redis.call('HMGET', job, 'x', fireAtText)
    local exp = liveWith(held[1], recTok)
    if exp then return 'X' .. recTok .. ',' .. exp end
    exp = liveWith(held[2], recTok)
    if exp then return 'W' .. recTok .. ',' .. exp end
    return 'Lclaimed'
  end

  if fireAt > now + earlyMs then return 'Learly' end

  -- One HGETALL: the token, the mark, the exclusive check, expired leases.
  local all = redis.call('HGETALL', job)
  local last, mark, xHeld, xValue, ownValue
  local dead = {}
  for i = 1, #all, 2 do
    local f, v = all[i], all[i + 1]
    if f == 't' then last = tonumber(v)
    elseif f == 'm' then mark = tonumber(v)
    else
      local exp = tonumber(string.match(v, '^%d+|(%-?%d+)|'))
      if exp == nil or exp <= now then
        dead[#dead + 1] = f
      elseif f == 'x' then
        xHeld, xValue = true, v
      elseif f == fireAtText then
        ownValue = v
      end
    end
  end

  -- Layout 1's mark and token: taken over once (a hash without a mark); its mark again for a
  -- catch-up claim (a layout-1 instance may have moved it since).
  local legacy = string.sub(fires, 1, -6) -- '<tag>:'
  local takeOver = mark == nil
  if takeOver then
    local old = redis.call('MGET', legacy .. 'mark', legacy .. 'token')
    mark = tonumber(old[1])
    local oldToken = tonumber(old[2])
    if oldToken and (not last or oldToken > last) then last = oldToken end
  elseif since then
    local oldMark = tonumber(redis.call('GET', legacy .. 'mark'))
    if oldMark and oldMark > mark then mark = oldMark end
  end

  if since and mark and fireAt <= mark then
    -- A re-sent catch-up claim whose record is gone: the owner's live lease of the mark's fire.
    if fireAt == mark then
      for i, v in ipairs({xValue or '', ownValue or ''}) do
        local tok, exp, fa, own = string.match(v, '^(%d+)|(%-?%d+)|(%-?%d+)|(.*)$')
        if fa == fireAtText and own == owner then
          return (i == 1 and 'X' or 'W') .. tok .. ',' .. exp
        end
      end
    end
    return 'Lbehind_mark'
  end

  -- The hash's fields to write: the mark when it moves forward (or was taken over), the token
  -- and the lease when won.
  local fields = {}
  if not mark or fireAt > mark then
    mark = fireAt
    fields[1], fields[2] = 'm', fireAtText
  elseif takeOver then
    fields[1], fields[2] = 'm', fmt(mark)
  end

  local exclusive = string.byte(lease, 1) == 120 -- 'x'
  local reply, value
  if exclusive and xHeld then
    if takeOver and last then
      fields[#fields + 1] = 't'
      fields[#fields + 1] = fmt(last)
    end
    value = 'b||' .. owner
    reply = 'B'
  else
    -- token = max(last + 1, Redis time in microseconds): strictly increasing per job, and still
    -- increasing when the counter is lost (restart without persistence, failover to a replica
    -- that missed it), as long as the server clock does not step back.
    local token = tonumber(t[1]) * 1000000 + tonumber(t[2])
    if last and last + 1 > token then token = last + 1 end
    local tok = fmt(token)
    local expiresAt = fmt(now + tonumber(exclusive and string.sub(lease, 2) or lease))
    fields[#fields + 1] = 't'
    fields[#fields + 1] = tok
    fields[#fields + 1] = exclusive and 'x' or fireAtText
    fields[#fields + 1] = tok .. '|' .. expiresAt .. '|' .. fireAtText .. '|' .. owner
    value = 'w|' .. tok .. '|' .. owner
    reply = (exclusive and 'X' or 'W') .. tok .. ',' .. expiresAt
  end

  if #dead > 0 then redis.call('HDEL', job, unpack(dead)) end
  if #fields > 0 then redis.call('HSET', job, unpack(fields)) end
  -- The record expires by itself 1 ms after fireAt + window; a catch-up fire older than that
  -- keeps no record (the mark guards it). The index drops records older than the window and
  -- expires with the newest (the mark).
  local ttl = fireAt + window + 1 - now
  if ttl > 0 then redis.call('SET', fireKey, value, 'PX', fmt(ttl)) end
  redis.call('ZREMRANGEBYSCORE', fires, '-inf', '(' .. fmt(now - window))
  redis.call('ZADD', fires, fireAtText, fireAtText)
  redis.call('PEXPIREAT', fires, fmt(mark + window + 1))
  return reply
end

local pattern = '^(%-?%d+)|([^|]+)|([^|]*)|(%d*):'
if #KEYS == 3 then -- one request: no table
  local _, last, fireAtText, lease, since = string.find(packed, pattern)
  return nowText .. '|' .. decide(KEYS[1], KEYS[2], KEYS[3], fireAtText, lease, tonumber(since), string.sub(packed, last + 1))
end
local replies, at, owner = {nowText}, 1, nil
for k = 1, #KEYS, 3 do
  local _, last, fireAtText, lease, since, ownerBytes = string.find(packed, pattern, at)
  at = last + 1
  if ownerBytes ~= '' then
    last = at + tonumber(ownerBytes)
    owner = string.sub(packed, at, last - 1)
    at = last
  end
  replies[#replies + 1] = decide(KEYS[k], KEYS[k + 1], KEYS[k + 2], fireAtText, lease, tonumber(since), owner)
end
return table.concat(replies, '|')
`;

/**
 * extend(KEYS = job per request; ARGV = slot, token, leaseMs per request) → one reply per
 * request, in order: {expiresAt, owner, now}, or false (nil to the client) when the slot no
 * longer holds a live lease with that token. One request for `extend`, a batch of one hash
 * slot for `extendMany`.
 */
export const EXTEND = `${NOW}
local function extend(job, slot, token, leaseMs)
  local v = redis.call('HGET', job, slot)
  if not v then return false end
  local tok, exp, rest = string.match(v, '^(%d+)|(%-?%d+)|(.*)$')
  if tok ~= token or tonumber(exp) <= now then return false end
  local expiresAt = fmt(now + leaseMs)
  redis.call('HSET', job, slot, tok .. '|' .. expiresAt .. '|' .. rest)
  return {expiresAt, string.sub(rest, string.find(rest, '|', 1, true) + 1), nowText}
end
local replies = {}
for i = 1, #KEYS do
  local a = i * 3 - 2
  replies[i] = extend(KEYS[i], ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2]))
end
return replies
`;

/**
 * release(KEYS = job per request; ARGV = requests) → one string with one character per request,
 * in order: `1` when the lease was held and live, else `0`. `requests` packs `<slot>|<token>|`
 * per request into one string. Deletes the slot only when it holds `token`; never touches the
 * claim record. One request for `release`, a batch of one hash slot for `releaseMany`.
 */
export const RELEASE = `${NOW}
local function release(job, slot, token)
  local v = redis.call('HGET', job, slot)
  if not v then return '0' end
  local tok, exp = string.match(v, '^(%d+)|(%-?%d+)|')
  if tok ~= token then return '0' end
  redis.call('HDEL', job, slot)
  if tonumber(exp) > now then return '1' end
  return '0'
end
if #KEYS == 1 then -- one request: no iterator, no table
  local slot, token = string.match(ARGV[1], '^([^|]+)|(%d+)|$')
  return release(KEYS[1], slot, token)
end
local replies, i = {}, 0
for slot, token in string.gmatch(ARGV[1], '([^|]+)|(%d+)|') do
  i = i + 1
  replies[i] = release(KEYS[i], slot, token)
end
if i ~= #KEYS then return redis.error_reply('release: ' .. i .. ' requests for ' .. #KEYS .. ' keys') end
return table.concat(replies)
`;

/**
 * inspect(KEYS = fires, job; ARGV = windowMs) → {records as `fireAt|outcome|token|owner`,
 * oldest first; live leases as a flat field/value list; the mark or ''}. Read-only: filters by
 * the Redis clock instead of collecting. Reads the fire keys it finds in the index and the
 * layout-1 mark (the larger mark counts), by names derived from the declared `...:fires` key
 * (same hash slot; a client-side ioredis `keyPrefix` applies to them too).
 */
export const INSPECT = `${NOW}
local window = tonumber(ARGV[1])
local tag = string.sub(KEYS[1], 1, -6)
local records = {}
local indexed = redis.call('ZRANGEBYSCORE', KEYS[1], fmt(now - window), '+inf')
for _, fa in ipairs(indexed) do
  local v = redis.call('GET', tag .. 'f:' .. fa)
  if v then records[#records + 1] = fa .. '|' .. v end
end
local live = {}
local mark = tonumber(redis.call('GET', tag .. 'mark'))
local all = redis.call('HGETALL', KEYS[2])
for i = 1, #all, 2 do
  local f, v = all[i], all[i + 1]
  if f == 'm' then
    if not mark or tonumber(v) > mark then mark = tonumber(v) end
  elseif f ~= 't' then
    local exp = tonumber(string.match(v, '^%d+|(%-?%d+)|'))
    if exp ~= nil and exp > now then
      live[#live + 1] = f
      live[#live + 1] = v
    end
  end
end
return {records, live, mark and fmt(mark) or ''}
`;

/**
 * readMarks(KEYS = job per key) → one string: `<now>` then, per key in order, `|` and its mark
 * (empty when it has none). The mark is read as {@link INSPECT} reads it: the hash's `m`, or the
 * layout-1 mark when that is larger (by a name derived from the declared job key: same slot).
 * Read-only.
 */
export const READ_MARKS = `${NOW}
local out = {nowText}
for i, job in ipairs(KEYS) do
  local mark = tonumber(redis.call('HGET', job, 'm'))
  local old = tonumber(redis.call('GET', string.sub(job, 1, -2) .. 'mark'))
  if old and (not mark or old > mark) then mark = old end
  out[i + 1] = mark and fmt(mark) or ''
end
return table.concat(out, '|')
`;

/**
 * withdraw(KEYS = fire, fires, job; ARGV = fireAt, slot, token) → 1 when withdrawn, else 0.
 * Hands back a won claim its owner will never run: deletes the fire's claim record (and its
 * index entry) only when the record is a win with `token`, and the lease slot only when it
 * still holds `token`. The token counter is untouched, so the next claim of the fire gets a
 * higher one.
 */
export const WITHDRAW = `
local fireKey, fires, job = KEYS[1], KEYS[2], KEYS[3]
local fireAtText, slot, token = ARGV[1], ARGV[2], ARGV[3]
local record = redis.call('GET', fireKey)
if not record then return 0 end
local outcome, recTok = string.match(record, '^(%a)|(%d*)|')
if outcome ~= 'w' or recTok ~= token then return 0 end
redis.call('DEL', fireKey)
redis.call('ZREM', fires, fireAtText)
local v = redis.call('HGET', job, slot)
if v and string.match(v, '^(%d+)|') == token then redis.call('HDEL', job, slot) end
return 1
`;
