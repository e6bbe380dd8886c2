/**
 * The Lua scripts of {@link RedisElector}: one per step, each atomic on the server and judged by
 * the Redis clock (`TIME`; Redis >= 5 replicates a script's effects, so `TIME` may precede a
 * write). Both keys of an election share one hash tag (Redis Cluster compatible).
 *
 * Layout (see `electionKeys`):
 * - KEYS leader: STRING `term|expiresAt|id`, expiring (PX) with the term.
 * - KEYS term: STRING, the last term issued (no TTL).
 *
 * A term is `max(last + 1, Redis time in microseconds)`: strictly increasing per election, and
 * still increasing when the counter is lost (restart without persistence, failover to a replica
 * that missed it), as long as the server clock does not step back.
 */

const COMMON = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function fmt(n) return string.format('%d', n) end
local function parse(v)
  if not v then return nil end
  local term, exp, id = string.match(v, '^(%d+)|(%-?%d+)|(.*)$')
  if term == nil then return nil end
  return term, tonumber(exp), id
end
`;

/**
 * campaign(KEYS = leader, term; ARGV = id, ttlMs) → {'elected', term, expiresAt} |
 * {'follower', term, expiresAt, id, now}. A live term of another id makes a follower; otherwise
 * (no leader, an expired one, or `id` itself) a NEW term starts.
 */
export const CAMPAIGN = `${COMMON}
local term, exp, id = parse(redis.call('GET', KEYS[1]))
if term and exp > now and id ~= ARGV[1] then
  return {'follower', term, fmt(exp), id, fmt(now)}
end
local next = tonumber(t[1]) * 1000000 + tonumber(t[2])
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if last + 1 > next then next = last + 1 end
redis.call('SET', KEYS[2], fmt(next))
local expiresAt = now + tonumber(ARGV[2])
redis.call('SET', KEYS[1], fmt(next) .. '|' .. fmt(expiresAt) .. '|' .. ARGV[1], 'PX', ARGV[2])
return {'elected', fmt(next), fmt(expiresAt)}
`;

/** renew(KEYS = leader; ARGV = term, id, ttlMs) → expiresAt | nil (not the live term). */
export const RENEW = `${COMMON}
local term, exp, id = parse(redis.call('GET', KEYS[1]))
if not term or term ~= ARGV[1] or id ~= ARGV[2] or exp <= now then return nil end
local expiresAt = now + tonumber(ARGV[3])
redis.call('SET', KEYS[1], term .. '|' .. fmt(expiresAt) .. '|' .. id, 'PX', ARGV[3])
return fmt(expiresAt)
`;

/** resign(KEYS = leader; ARGV = term) → 1 when the term was live and is now ended, else 0. */
export const RESIGN = `${COMMON}
local term, exp = parse(redis.call('GET', KEYS[1]))
if not term or term ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
if exp > now then return 1 end
return 0
`;

/** leader(KEYS = leader) → {term, expiresAt, id} | nil. Read-only. */
export const LEADER = `${COMMON}
local term, exp, id = parse(redis.call('GET', KEYS[1]))
if not term or exp <= now then return nil end
return {term, fmt(exp), id}
`;
