import { describe, expect, it } from 'vitest';
import { eachKey, partKey } from '../../src/backend.js';
import { every, MemoryLock, Scheduler } from '../../src/index.js';
import { secondsBetween, simulatedFleet } from '../leader/fleet-helpers.js';

type Runs = ReturnType<typeof simulatedFleet>['runs'];

/** fireAt → part index → instances that ran it. */
function partsByFire(runs: Runs): Map<number, Map<number, string[]>> {
  const out = new Map<number, Map<number, string[]>>();
  for (const r of runs) {
    const parts = out.get(r.fireAt) ?? new Map<number, string[]>();
    const index = r.shard?.index ?? -1;
    parts.set(index, [...(parts.get(index) ?? []), r.instanceId]);
    out.set(r.fireAt, parts);
  }
  return out;
}

/** The spread bound of the issue for one fire: nobody above ⌈n/live⌉+1 while someone has none. */
function expectSpread(parts: Map<number, string[]>, live: string[], n: number): void {
  const perInstance = new Map(live.map((id) => [id, 0]));
  for (const [, ids] of parts)
    for (const id of ids) perInstance.set(id, (perInstance.get(id) ?? 0) + 1);
  const counts = [...perInstance.values()];
  if (Math.min(...counts) === 0) {
    expect(Math.max(...counts)).toBeLessThanOrEqual(Math.ceil(n / live.length) + 1);
  }
}

describe('shards: n', () => {
  it('validates shards at add(): integer 1..1024 or each, a registry store, catchUp skip', () => {
    const fleet = simulatedFleet();
    const scheduler = fleet.member('a');
    const base = { trigger: every(1000), run: () => {} };
    for (const [shards, field] of [
      [0, 'shards'],
      [1.5, 'shards'],
      [2000, 'shards'],
      ['all', 'shards'],
    ] as const) {
      expect(() => scheduler.add({ ...base, name: `bad-${shards}`, shards } as never)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION', field }),
      );
    }
    expect(() => scheduler.add({ ...base, name: 'late', shards: 4, catchUp: 'latest' })).toThrow(
      expect.objectContaining({ field: 'catchUp' }),
    );
    const noStore = new Scheduler({ lock: new MemoryLock() });
    expect(() => noStore.add({ ...base, name: 'x', shards: 2 })).toThrow(
      expect.objectContaining({ field: 'shards' }),
    );
    expect(() => noStore.add({ ...base, name: 'y', shards: 'each' })).toThrow(
      expect.objectContaining({ field: 'shards' }),
    );
  });

  it('8 parts on 3 instances: every part of every fire once, spread within the bound', async () => {
    const fleet = simulatedFleet();
    const { fake, lock } = fleet;
    const members = ['a', 'b', 'c'].map((id) => fleet.member(id, { shards: 8 }));
    for (const m of members) m.start();
    await fake.advance(2_500); // the first heartbeats: every instance sees the three
    const from = fake.now();
    await fake.advance(100_000);
    const to = fake.now() - 5_000; // parts of the last fires may still wait for their grace
    await fleet.stopAll();

    const byFire = partsByFire(fleet.runs);
    const fires = secondsBetween(from, to);
    expect(fires.length).toBeGreaterThanOrEqual(95);
    for (const fireAt of fires) {
      const parts = byFire.get(fireAt);
      expect(parts, `fire ${fireAt}`).toBeDefined();
      expect([...parts!.keys()].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      for (const [, ids] of parts!) expect(ids).toHaveLength(1); // each part exactly once
      // consistent views: each instance runs exactly its preferred parts (3, 3, 2)
      const counts = ['a', 'b', 'c'].map(
        (id) => [...parts!.values()].filter((x) => x[0] === id).length,
      );
      expect(counts).toEqual([3, 3, 2]);
    }
    // ctx.shard = { index, count } and history rows carry it, claimed on the parts' own keys
    expect(fleet.runs.every((r) => r.shard?.count === 8 && r.shard.each === undefined)).toBe(true);
    const rows = await fleet.history();
    expect(
      rows
        .filter((e) => e.fireAt === fires[0])
        .map((e) => e.shard?.index)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect((await lock.inspect(partKey('tick', 3, 8))).fires.length).toBeGreaterThan(0);
    expect((await lock.inspect('tick')).fires).toEqual([]);
  });

  it('an instance that stops: its parts are claimed by the others after the grace, once', async () => {
    const fleet = simulatedFleet();
    const { fake } = fleet;
    const options = { shardGraceMs: 300 };
    const members = ['a', 'b', 'c'].map((id) => fleet.member(id, { shards: 8 }, options));
    for (const m of members) m.start();
    await fake.advance(2_500);
    const [a, b] = members;
    // c dies: its claims never answer; the others still list it until it expires (3 beats)
    fleet.lock.dead.add('c');
    const from = fake.now();
    await fake.advance(20_000);
    const to = fake.now() - 2_000;
    fleet.lock.dead.delete('c');
    await fleet.stopAll();

    const byFire = partsByFire(fleet.runs.filter((r) => r.instanceId !== 'c'));
    for (const fireAt of secondsBetween(from + 1_000, to)) {
      const parts = byFire.get(fireAt)!;
      expect(
        [...parts.keys()].sort((x, y) => x - y),
        `fire ${fireAt}`,
      ).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      for (const [, ids] of parts) expect(ids).toHaveLength(1);
      expectSpread(parts, [a!.instanceId, b!.instanceId], 8);
    }
    // c's parts wait for the grace counted from the fire time, though the fires are prepared
    // ahead of it (counted from the preparation they would start up to the lead earlier): a
    // rank-1 part waits one grace, and one more as its instance holds a part of the fire already
    // (`claimDelayMs`), so 2 × 300 ms after the fire time
    const late = fleet.runs.filter(
      (r) => r.fireAt >= from + 1_000 && r.fireAt <= to && r.startedAt > r.fireAt + 100,
    );
    expect(late.length).toBeGreaterThan(0);
    for (const r of late) expect(r.startedAt - r.fireAt).toBeGreaterThanOrEqual(2 * 300);
  });

  it('run now of a sharded job runs one part covering everything: ctx.shard { index 0, count 1 }', async () => {
    const fleet = simulatedFleet();
    const a = fleet.member('a', { shards: 4, trigger: every(3_600_000) });
    a.start();
    await fleet.fake.advance(10);
    const outcome = a.trigger('tick');
    await fleet.fake.advance(100);
    expect((await outcome).status).toBe('succeeded');
    expect(fleet.runs.map((r) => r.shard)).toEqual([{ index: 0, count: 1 }]);
    await fleet.stopAll();
  });
});

describe("shards: 'each'", () => {
  it('every live instance runs each fire once; a joiner and a leaver change who runs it', async () => {
    const fleet = simulatedFleet();
    const { fake, lock } = fleet;
    const [a, b, c] = ['a', 'b', 'c'].map((id) => fleet.member(id, { shards: 'each' }));
    for (const m of [a!, b!, c!]) m.start();
    await fake.advance(3_000);
    const t1 = fake.now();
    await fake.advance(10_000);
    const d = fleet.member('d', { shards: 'each' });
    d.start();
    await fake.advance(10_000);
    await fleet.stopAll([c!]);
    const t2 = fake.now();
    await fake.advance(10_000);
    const t3 = fake.now();
    await fleet.stopAll([a!, b!, d]);

    const ranBy = (fireAt: number) =>
      fleet.runs
        .filter((r) => r.fireAt === fireAt)
        .map((r) => r.instanceId)
        .sort();
    for (const f of secondsBetween(t1 + 1_000, t1 + 9_000))
      expect(ranBy(f)).toEqual(['a', 'b', 'c']);
    for (const f of secondsBetween(t2 + 1_000, t3 - 1_000))
      expect(ranBy(f)).toEqual(['a', 'b', 'd']);
    // each run recorded, marked each, with this instance's position among the live ones
    const rows = (await fleet.history()).filter((e) => e.fireAt === t1 + 2_000);
    expect(rows.map((e) => [e.instanceId, e.shard]).sort()).toEqual([
      ['a', { index: 0, count: 3, each: true }],
      ['b', { index: 1, count: 3, each: true }],
      ['c', { index: 2, count: 3, each: true }],
    ]);
    // claimed on each instance's own key: nobody else's claim competes
    expect((await lock.inspect(eachKey('tick', 'a'))).fires.length).toBeGreaterThan(5);
    const runs = fleet.runs.map((r) => `${r.fireAt}/${r.instanceId}`);
    expect(runs.length).toBe(new Set(runs).size);
  });
});
