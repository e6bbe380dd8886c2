import { describe, expect, it } from 'vitest';
import {
  decodeShard,
  eachKey,
  encodeShard,
  normalizeShard,
  parseShardKey,
  partKey,
  SHARD_KEY_SEPARATOR,
} from '../../src/backend.js';
import {
  describeFireGroup,
  type Execution,
  groupFires,
  InvalidOptionError,
  MemoryLock,
  MemoryStore,
} from '../../src/index.js';
import { fireLockKey } from '../../src/shards/part-keys.js';

function execution(over: Partial<Execution> & { id: string }): Execution {
  return {
    job: 'job',
    fireAt: 1_000,
    status: 'succeeded',
    attempt: 1,
    instanceId: 'a',
    token: 1,
    startedAt: 1_000,
    finishedAt: 1_010,
    error: null,
    reason: null,
    requestedBy: null,
    ...over,
  };
}

describe('part keys', () => {
  it('never equal a job name: job names refuse the separator (a control character)', () => {
    expect(/\p{Cc}/u.test(SHARD_KEY_SEPARATOR)).toBe(true);
    expect(partKey('a', 0, 2)).not.toBe(partKey('a', 0, 3));
    expect(partKey('a', 1, 2)).not.toBe(partKey('a', 0, 2));
    // a job named like another job's part key without the separator stays distinct
    expect(partKey('a', 0, 2)).not.toBe('a part 0/2');
    expect(eachKey('a', 'x')).not.toBe(partKey('a', 0, 1));
  });

  it('parse back into the job and the part or instance, names with any well-formed Unicode', () => {
    for (const job of ['plain', 'with/slash {tag} %', '日本語 🎉', 'part', 'each']) {
      expect(parseShardKey(partKey(job, 3, 8))).toEqual({ job, part: { index: 3, count: 8 } });
      expect(parseShardKey(eachKey(job, 'host-1-123'))).toEqual({ job, each: 'host-1-123' });
      expect(parseShardKey(job)).toBeNull();
    }
    expect(fireLockKey('j', null, 'a')).toBe('j');
    expect(fireLockKey('j', { index: 1, count: 4 }, 'a')).toBe(partKey('j', 1, 4));
    expect(fireLockKey('j', { index: 0, count: 2, each: true }, 'a')).toBe(eachKey('j', 'a'));
  });

  it('are accepted by the MemoryLock as keys of their own (claims per part)', async () => {
    const lock = new MemoryLock();
    const fireAt = Date.now();
    const claim = (key: string, owner: string) =>
      lock.claim({ key, fireAt, owner, leaseMs: 1_000, exclusive: true });
    expect((await claim(partKey('j', 0, 2), 'a')).status).toBe('won');
    expect((await claim(partKey('j', 1, 2), 'b')).status).toBe('won');
    expect((await claim(partKey('j', 0, 2), 'b')).status).toBe('lost');
    expect((await claim('j', 'c')).status).toBe('won'); // the job's own key is untouched
  });
});

describe('shard info', () => {
  it('normalizes, encodes and decodes; refuses malformed values with a typed error', () => {
    expect(normalizeShard(undefined)).toBeNull();
    expect(normalizeShard({ index: 1, count: 2, extra: 1 } as never)).toEqual({
      index: 1,
      count: 2,
    });
    expect(encodeShard({ index: 2, count: 8 })).toBe('{"index":2,"count":8}');
    expect(decodeShard(encodeShard({ index: 0, count: 3, each: true }))).toEqual({
      index: 0,
      count: 3,
      each: true,
    });
    expect(decodeShard(null)).toBeNull();
    expect(decodeShard('not json')).toBeNull();
    for (const bad of [
      { index: 2, count: 2 },
      { index: -1, count: 2 },
      { index: 0.5, count: 2 },
      'x',
    ]) {
      expect(() => normalizeShard(bad)).toThrow(InvalidOptionError);
      try {
        normalizeShard(bad);
      } catch (error) {
        expect((error as InvalidOptionError).field).toBe('shard');
      }
    }
  });

  it('MemoryStore keeps a part and returns it; a plain fire has no shard field', async () => {
    const store = new MemoryStore();
    await store.record(execution({ id: 'p1', shard: { index: 1, count: 3 } }));
    await store.record(execution({ id: 'plain', startedAt: 900 }));
    const { executions } = await store.history('job');
    expect(executions[0]).toMatchObject({ id: 'p1', shard: { index: 1, count: 3 } });
    expect('shard' in executions[1]!).toBe(false);
    await expect(
      store.record(execution({ id: 'bad', shard: { index: 3, count: 3 } })),
    ).rejects.toThrow(InvalidOptionError);
  });
});

describe('groupFires', () => {
  it('shows a sharded fire as one fire with its parts, plain fires on their own', () => {
    const rows = [
      execution({
        id: 'p2',
        fireAt: 2_000,
        startedAt: 2_003,
        shard: { index: 2, count: 3 },
        status: 'running',
      }),
      execution({ id: 'p0', fireAt: 2_000, startedAt: 2_002, shard: { index: 0, count: 3 } }),
      execution({ id: 'single', fireAt: 1_500, startedAt: 1_501 }),
      execution({
        id: 'e-b',
        fireAt: 1_000,
        startedAt: 1_002,
        instanceId: 'b',
        shard: { index: 1, count: 2, each: true },
      }),
      execution({
        id: 'e-a',
        fireAt: 1_000,
        startedAt: 1_001,
        instanceId: 'a',
        shard: { index: 0, count: 2, each: true },
      }),
    ];
    const groups = groupFires(rows);
    expect(groups.map((g) => [g.kind, g.fireAt, g.executions.map((e) => e.id)])).toEqual([
      ['parts', 2_000, ['p0', 'p2']],
      ['single', 1_500, ['single']],
      ['each', 1_000, ['e-a', 'e-b']],
    ]);
    expect(groups[0]!.missingParts).toEqual([1]);
    expect(describeFireGroup(groups[0]!)).toBe('3 parts: 1 running, 1 succeeded, 1 not recorded');
    expect(describeFireGroup(groups[2]!)).toBe('2 instances: 2 succeeded');
  });
});
