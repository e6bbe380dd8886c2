import {
  BackendUnavailableError,
  type ClaimRequest,
  InvalidOptionError,
  isFleetcronError,
} from '@fleetcron/core';
import { ReplyDroppingProxy, startRedis } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeKeyPart, lockKeys, RedisLock } from '../src/index.js';
import { newClient, sharedUrl, uniquePrefix } from './fixture.js';

const opened: Redis[] = [];
afterAll(async () => {
  for (const client of opened) client.disconnect();
});

async function client(url?: string): Promise<Redis> {
  const c = newClient(url ?? sharedUrl());
  opened.push(c);
  return c;
}

const req = (key: string, fireAt: number, owner: string, exclusive = true): ClaimRequest => ({
  key,
  fireAt,
  owner,
  leaseMs: 30_000,
  exclusive,
});

/** The part of a key Redis Cluster hashes: between the first `{` and the next `}`. */
function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return key.slice(open + 1, close);
}

async function evalshaCalls(admin: Redis): Promise<number> {
  const info = await admin.info('commandstats');
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

describe('options', () => {
  it('rejects bad options at construction with InvalidOptionError naming the field', async () => {
    const c = await client();
    const bad: [object, string][] = [
      [{ prefix: 'a{b' }, 'prefix'],
      [{ prefix: '' }, 'prefix'],
      [{ windowMs: 0 }, 'windowMs'],
      [{ windowMs: 1.5 }, 'windowMs'],
      [{ commandTimeoutMs: -1 }, 'commandTimeoutMs'],
      [{ durable: 'yes' }, 'durable'],
      [{ earlyToleranceMs: -1 }, 'earlyToleranceMs'],
      [{ earlyToleranceMs: 0.5 }, 'earlyToleranceMs'],
    ];
    for (const [options, field] of bad) {
      let thrown: unknown;
      try {
        new RedisLock(c, options);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidOptionError);
      expect((thrown as InvalidOptionError).field).toBe(field);
    }
    const lock = new RedisLock(c);
    expect(lock.windowMs).toBe(300_000);
    expect(lock.capabilities).toEqual({
      minLeaseMs: 1,
      leaseGranularityMs: 1,
      durable: false,
      clock: 'backend',
      earlyToleranceMs: 250,
      durableMark: false,
      maxBatch: 2_000,
    });
  });

  it('attaches a no-op error listener only to a client that has none', async () => {
    const url = sharedUrl();
    const bare = new Redis(url, { lazyConnect: true });
    expect(bare.listenerCount('error')).toBe(0);
    new RedisLock(bare);
    new RedisLock(bare);
    expect(bare.listenerCount('error')).toBe(1);
    bare.disconnect();
    const c = await client();
    const before = c.listenerCount('error');
    new RedisLock(c);
    expect(c.listenerCount('error')).toBe(before);
  });
});

describe('key layout', () => {
  it('encodes braces, % and lone surrogates injectively and keeps one hash tag per job', async () => {
    expect(encodeKeyPart('a{b}c%d')).toBe('a%7Bb%7Dc%25d');
    expect(encodeKeyPart('€ 🎉/x')).toBe('€ 🎉/x');
    expect(encodeKeyPart('\ud800x')).toBe('%uD800x');
    // '%7B' literally and '{' must not collide
    expect(encodeKeyPart('%7B')).not.toBe(encodeKeyPart('{'));
    for (const name of ['plain', '{x}', '}{', 'a}b{c', `${'é'.repeat(511)}}`, 'x/y z:1']) {
      const keys = Object.values(lockKeys('fleetcron', name));
      const tags = new Set(keys.map(hashTagOf));
      expect(tags.size).toBe(1);
      expect([...tags][0]).toBe(`fleetcron:${encodeKeyPart(name)}`);
    }
  });

  it('stores each claim record in its own key that expires at fireAt + windowMs (Redis clock)', async () => {
    const c = await client();
    const prefix = uniquePrefix();
    const windowMs = 60_000;
    const lock = new RedisLock(c, { prefix, windowMs });
    const key = 'job {with} braces';
    const fireAt = Date.now();
    const won = await lock.claim({ ...req(key, fireAt, 'a'), leaseMs: 10_000 });
    expect(won.status).toBe('won');
    const keys = lockKeys(prefix, key);
    const all = (await c.keys(`{${prefix}:*`)).sort();
    expect(all).toEqual([keys.fire + fireAt, keys.fires, keys.job].sort());
    // set with PX from the script's TIME: Redis adds it to its own clock, up to 1 ms later
    const recordExpiry = await c.pexpiretime(keys.fire + fireAt);
    expect(recordExpiry).toBeGreaterThanOrEqual(fireAt + windowMs + 1);
    expect(recordExpiry).toBeLessThanOrEqual(fireAt + windowMs + 2);
    expect(await c.pexpiretime(keys.fires)).toBe(fireAt + windowMs + 1);
    if (won.status === 'won') {
      const [sec, usec] = await c.time();
      // expiry is now + leaseMs by the Redis clock
      const redisNow = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
      expect(won.lease.expiresAt).toBeGreaterThan(redisNow);
      expect(won.lease.expiresAt).toBeLessThanOrEqual(redisNow + 10_000);
      expect(await c.hgetall(keys.job)).toEqual({
        t: String(won.lease.token),
        m: String(fireAt),
        x: `${won.lease.token}|${won.lease.expiresAt}|${fireAt}|a`,
      });
    }
    // the job hash (token, mark, leases) never expires
    expect(await c.pttl(keys.job)).toBe(-1);
  });

  it('takes over the mark and token of a job claimed with layout 1, and honours its claim records', async () => {
    const c = await client();
    const prefix = uniquePrefix();
    const lock = new RedisLock(c, { prefix });
    const tag = `{${prefix}:old job}`;
    const t = Date.now();
    const oldToken = (t + 60_000) * 1000; // ahead of the Redis clock in µs
    // what layout 1 left: fire t - 100 won by 'old', the mark at t - 100, its token
    await c.set(`${tag}:f:${t - 100}`, `w|${oldToken}|old`, 'PX', 60_000);
    await c.zadd(`${tag}:fires`, t - 100, String(t - 100));
    await c.set(`${tag}:mark`, String(t - 100));
    await c.set(`${tag}:token`, String(oldToken));
    expect((await lock.inspect('old job')).mark, 'the layout-1 mark').toBe(t - 100);
    expect((await lock.readMarks(['old job'])).marks, 'readMarks: the layout-1 mark').toEqual([
      t - 100,
    ]);
    // the fire layout 1 recorded is not won again, by anyone
    expect(await lock.claim(req('old job', t - 100, 'new'))).toMatchObject({
      status: 'lost',
      reason: 'claimed',
    });
    // a catch-up claim behind the layout-1 mark is refused
    expect(
      await lock.claim({ ...req('old job', t - 200, 'new'), catchUp: { since: t - 1_000 } }),
    ).toMatchObject({ status: 'lost', reason: 'behind_mark' });
    // the next fire: a token above layout 1's, the mark moves on
    const next = await lock.claim(req('old job', t, 'new'));
    expect(next.status === 'won' && next.lease.token).toBe(oldToken + 1);
    expect((await lock.inspect('old job')).mark).toBe(t);
    // a layout-1 instance moving its own mark during a rolling upgrade: catch-up respects it
    await c.set(`${tag}:mark`, String(t + 50));
    expect(
      await lock.claim({ ...req('old job', t + 20, 'new'), catchUp: { since: t - 1_000 } }),
    ).toMatchObject({ status: 'lost', reason: 'behind_mark' });
    expect((await lock.inspect('old job')).mark).toBe(t + 50);
    expect((await lock.readMarks(['old job'])).marks, 'the larger layout-1 mark').toEqual([t + 50]);
  });
  it("works under the client's ioredis keyPrefix (inspect included)", async () => {
    const url = sharedUrl();
    const prefixed = new Redis(url, { keyPrefix: 'app:' });
    prefixed.on('error', () => {});
    opened.push(prefixed);
    const prefix = uniquePrefix();
    const lock = new RedisLock(prefixed, { prefix });
    const t = Date.now();
    expect((await lock.claim(req('kp', t, 'a'))).status).toBe('won');
    expect((await lock.claim(req('kp', t + 1, 'a'))).status).toBe('busy');
    const seen = await lock.inspect('kp');
    expect(seen.fires.map((f) => f.outcome)).toEqual(['won', 'busy']);
    const raw = await client();
    expect(await raw.exists(`app:${lockKeys(prefix, 'kp').fire}${t}`)).toBe(1);
    expect(seen.mark, 'the mark read under the keyPrefix').toBe(t + 1);
    expect((await lock.readMarks(['kp', 'none'])).marks, 'readMarks under the keyPrefix').toEqual([
      t + 1,
      null,
    ]);
  });
});

describe('tokens', () => {
  it('are the Redis time in µs or more, and keep increasing when the counter is lost', async () => {
    const c = await client();
    const prefix = uniquePrefix();
    const lock = new RedisLock(c, { prefix });
    const t = Date.now();
    const tokens: number[] = [];
    for (let i = 0; i < 50; i++) {
      const r = await lock.claim(req('tok', t + i, `o${i % 3}`, false));
      if (r.status !== 'won') throw new Error(`expected won, got ${r.status}`);
      tokens.push(r.lease.token);
      if (i === 25) await c.hdel(lockKeys(prefix, 'tok').job, 't'); // what a restart without AOF loses
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
    expect(Number.isSafeInteger(tokens.at(-1))).toBe(true);
    expect(tokens[0]).toBeGreaterThan(t * 1000 - 60_000_000);
  });
});

describe('re-sent claims', () => {
  it('a claim whose reply was lost is re-sent by ioredis and answered with the same lease', async () => {
    const proxy = await ReplyDroppingProxy.start(sharedUrl());
    try {
      const viaProxy = await client(proxy.url);
      const admin = await client();
      const prefix = uniquePrefix();
      const lock = new RedisLock(viaProxy, { prefix });
      const other = new RedisLock(admin, { prefix });
      await lock.inspect('warm-up'); // loads the scripts, connection ready
      const calls = await evalshaCalls(admin);

      proxy.dropNextReply = true;
      const fireAt = Date.now();
      const result = await lock.claim(req('resend', fireAt, 'a'));
      expect(proxy.dropped).toBe(1);
      // the script ran twice: once before the cut, once when ioredis re-sent it
      expect((await evalshaCalls(admin)) - calls).toBeGreaterThanOrEqual(2);
      expect(result.status).toBe('won');
      const seen = await other.inspect('resend');
      expect(seen.fires).toHaveLength(1);
      expect(seen.leases).toHaveLength(1);
      if (result.status === 'won') expect(seen.leases[0]).toEqual(result.lease);
      expect(await other.claim(req('resend', fireAt, 'b'))).toMatchObject({
        status: 'lost',
        reason: 'claimed',
      });
    } finally {
      await proxy.close();
    }
  });

  it('connections killed by CLIENT KILL mid-burst: each fire has exactly one owner', async () => {
    const server = await startRedis({ strategy: 'managed' });
    try {
      const prefix = uniquePrefix();
      const owners = await Promise.all(
        Array.from({ length: 4 }, async () => new RedisLock(await client(server.url), { prefix })),
      );
      const admin = await client(server.url);
      const t = Date.now();
      const fires = 200;
      const answers = owners.flatMap((lock, o) =>
        Array.from({ length: fires }, (_, i) =>
          lock.claim(req('burst', t + i, `o${o}`, false)).then(
            (r) => ({ i, o, r }),
            (error: unknown) => ({ i, o, error }),
          ),
        ),
      );
      await server.dropConnections();
      const results = await Promise.all(answers);
      for (const res of results) {
        if ('error' in res) expect(isFleetcronError(res.error, 'BACKEND_UNAVAILABLE')).toBe(true);
      }
      const inspect = await new RedisLock(admin, { prefix }).inspect('burst');
      // every answered win is the recorded owner of its fire, and no fire has two winners
      const winners = new Map<number, string>();
      for (const res of results) {
        if ('r' in res && res.r.status === 'won') {
          expect(winners.has(res.i)).toBe(false);
          winners.set(res.i, `o${res.o}`);
        }
      }
      for (const fire of inspect.fires) {
        const winner = winners.get(fire.fireAt - t);
        if (winner) expect(fire.owner).toBe(winner);
      }
      expect(inspect.fires.length).toBeGreaterThanOrEqual(winners.size);
    } finally {
      await server.close();
    }
  });
});

describe('failures', () => {
  it('a frozen server gives BackendUnavailableError after commandTimeoutMs, then recovers', async () => {
    const server = await startRedis({ strategy: 'managed' });
    try {
      const c = await client(server.url);
      const lock = new RedisLock(c, { prefix: uniquePrefix(), commandTimeoutMs: 500 });
      const t = Date.now();
      expect((await lock.claim(req('frozen', t, 'a'))).status).toBe('won');
      await server.pause();
      const started = Date.now();
      const error = await lock.claim(req('frozen', t + 1, 'a')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BackendUnavailableError);
      expect((error as BackendUnavailableError).backend).toBe('redis');
      expect(Date.now() - started).toBeLessThan(10_000);
      await server.resume();
      // the timed-out claim may still have run (ioredis sends it once the server answers):
      // it then reads as won-by-a (a replay), never as a second owner
      const again = await lock.claim(req('frozen', t + 2, 'a', false));
      expect(again.status).toBe('won');
    } finally {
      await server.close();
    }
  });

  it('a stopped server gives BackendUnavailableError, never lost', async () => {
    const server = await startRedis({ strategy: 'managed' });
    try {
      const c = await client(server.url);
      const lock = new RedisLock(c, { prefix: uniquePrefix(), commandTimeoutMs: 1000 });
      await server.stop();
      const error = await lock.claim(req('down', Date.now(), 'a')).catch((e: unknown) => e);
      expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
      await server.start();
      const back = await (async () => {
        const deadline = Date.now() + 20_000;
        for (;;) {
          try {
            return await lock.claim(req('down', Date.now(), 'a'));
          } catch (e) {
            if (Date.now() > deadline) throw e;
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      })();
      expect(back.status).toBe('won');
    } finally {
      await server.close();
    }
  });

  it('reloads its scripts after SCRIPT FLUSH (NOSCRIPT)', async () => {
    const c = await client();
    const lock = new RedisLock(c, { prefix: uniquePrefix() });
    const t = Date.now();
    expect((await lock.claim(req('noscript', t, 'a'))).status).toBe('won');
    await c.script('FLUSH');
    expect((await lock.claim(req('noscript', t + 1, 'a', false))).status).toBe('won');
    expect((await lock.inspect('noscript')).fires).toHaveLength(2);
  });
});

describe('restart and durability', () => {
  it('without persistence a restart forgets claims: the same fire can be won again', async () => {
    const server = await startRedis({ strategy: 'managed' });
    try {
      const prefix = uniquePrefix();
      const lock = new RedisLock(await client(server.url), { prefix });
      expect((await lock.verifyDurability()).durable).toBe(false);
      const t = Date.now();
      const first = await lock.claim(req('restart', t, 'a'));
      await server.restart();
      const second = await retry(() => lock.claim(req('restart', t, 'b')));
      expect(first.status).toBe('won');
      expect(second.status).toBe('won'); // the documented duplicate: durable is false
      if (first.status === 'won' && second.status === 'won') {
        expect(second.lease.token).toBeGreaterThan(first.lease.token); // tokens still fence
      }
      const declared = new RedisLock(await client(server.url), { prefix, durable: true });
      await expect(declared.verifyDurability()).rejects.toBeInstanceOf(InvalidOptionError);
    } finally {
      await server.close();
    }
  });

  it('with appendonly + appendfsync always a restart keeps claims, leases and tokens', async () => {
    const server = await startRedis({ strategy: 'managed', appendOnly: true });
    try {
      const prefix = uniquePrefix();
      const lock = new RedisLock(await client(server.url), { prefix, durable: true });
      const report = await lock.verifyDurability();
      expect(report).toEqual({
        durable: true,
        nodes: [{ appendonly: 'yes', appendfsync: 'always' }],
      });
      const t = Date.now();
      const first = await lock.claim(req('restart', t, 'a'));
      await server.restart({ crash: true });
      const again = await retry(() => lock.claim(req('restart', t, 'b')));
      expect(again).toMatchObject({ status: 'lost', reason: 'claimed' });
      expect((await lock.claim(req('restart', t + 1, 'b'))).status).toBe('busy');
      if (first.status !== 'won') throw new Error('expected won');
      expect(await lock.release(first.lease)).toBe(true);
      const next = await lock.claim(req('restart', t + 2, 'b'));
      if (next.status !== 'won') throw new Error('expected won');
      expect(next.lease.token).toBeGreaterThan(first.lease.token);
    } finally {
      await server.close();
    }
  });
});

async function retry<T>(run: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      return await run();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
