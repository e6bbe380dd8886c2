import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type BatchOptions,
  type ClaimRequest,
  type ClaimResult,
  every,
  FakeClock,
  type Logger,
  type MarkReading,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import { CATCH_UP_STEP, MARK_READ_CHUNK } from '../../src/scheduler/catch-up/catch-up-pass.js';
import { seeded } from '../seeded-random.js';
import { allHistory, withoutMarkReads } from './helpers.js';

const MIN = 60_000;

/** A MemoryLock that counts mark reads (`readMarks` calls and their keys, `inspect` calls). */
class CountingLock extends MemoryLock {
  readonly reads: number[] = [];
  inspects = 0;
  failReads = false;
  /** Catch-up claims sent, per job. */
  readonly catchUpClaims = new Map<string, number>();
  /** Each `claimMany` and `readMarks` call takes this long on the fake clock, ms (a round trip). */
  latencyMs = 0;
  /** The fake time the last catch-up claim was answered. */
  lastCatchUpAnswer = 0;
  /** Each `readMarks` call first waits this long on the fake clock, ms (a slow read only). */
  readMs = 0;

  constructor(private readonly fake: FakeClock) {
    super({ clock: fake });
  }

  override async claimMany(
    requests: readonly ClaimRequest[],
    options?: BatchOptions,
  ): Promise<ClaimResult[]> {
    let catchUp = false;
    for (const request of requests) {
      if (request.catchUp === undefined) continue;
      catchUp = true;
      this.catchUpClaims.set(request.key, (this.catchUpClaims.get(request.key) ?? 0) + 1);
    }
    if (this.latencyMs > 0) await this.fake.sleep(this.latencyMs);
    const results = await super.claimMany(requests, options);
    if (catchUp) this.lastCatchUpAnswer = this.fake.now();
    return results;
  }
  override async readMarks(keys: readonly string[], options?: BatchOptions): Promise<MarkReading> {
    if (this.readMs > 0) await this.fake.sleep(this.readMs);
    this.reads.push(keys.length);
    if (this.failReads) throw new Error('marks unreadable');
    if (this.latencyMs > 0) await this.fake.sleep(this.latencyMs);
    return super.readMarks(keys, options);
  }
  override async inspect(key: string) {
    this.inspects++;
    return super.inspect(key);
  }
}

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * `jobs` jobs on `every(1 min)` claimed once at 1 min by a first fleet, then the whole fleet down
 * across the 2 and 3 min fires; a new scheduler starts at 3.5 min with `catchUp: 'latest'`.
 */
async function restartWith(jobs: number, lock: CountingLock, fake: FakeClock, logger = quiet) {
  const { fleet, ran } = await restartFleetWith(1, jobs, lock, fake, logger);
  return { again: fleet[0] as Scheduler, ran };
}

/** {@link restartWith} with `instances` schedulers restarted together on the one lock. */
async function restartFleetWith(
  instances: number,
  jobs: number,
  lock: CountingLock,
  fake: FakeClock,
  logger = quiet,
  latencyMs = 0,
) {
  const ran = new Map<string, number[]>();
  const make = () => {
    const s = new Scheduler({ lock, clock: fake, logger });
    for (let i = 0; i < jobs; i++) {
      const name = `job-${i}`;
      s.add({
        name,
        trigger: every(MIN),
        catchUp: 'latest',
        run: (ctx) => void ran.set(name, [...(ran.get(name) ?? []), ctx.fireAt.getTime()]),
      });
    }
    return s;
  };
  const first = make();
  first.start();
  await fake.advance(1.2 * MIN);
  const stopping = first.stop();
  await fake.advance(0);
  await stopping;
  await fake.advance(3.5 * MIN - fake.now());
  ran.clear();
  lock.reads.length = 0;
  lock.inspects = 0;
  lock.catchUpClaims.clear();
  lock.latencyMs = latencyMs;
  const fleet = Array.from({ length: instances }, make);
  const restartedAt = fake.now();
  for (const s of fleet) s.start();
  if (latencyMs === 0) for (let i = 0; i < 40; i++) await fake.flush();
  else for (let t = 0; t < 5_000; t += 10) await fake.advance(10);
  return { fleet, ran, restartedAt };
}

async function stopOn(fake: FakeClock, s: Scheduler) {
  const stopping = s.stop();
  await fake.advance(0);
  await stopping;
}

describe('catch-up reads the marks of many jobs with readMarks (bounded at 10,000 jobs)', () => {
  it('reads 2,500 marks in 3 calls, again before each step of claims, no inspect; every job catches up', async () => {
    const fake = new FakeClock(0);
    const lock = new CountingLock(fake);
    const { again, ran } = await restartWith(2500, lock, fake);
    expect(MARK_READ_CHUNK).toBe(1000);
    // the clock probe; the first read (1000 + 1000 + 500); before each step of claims after the
    // first, its jobs (9 × 250)
    expect(CATCH_UP_STEP).toBe(250);
    const reads = [1, 1000, 1000, 500, ...Array<number>(9).fill(250)];
    expect([...lock.reads].sort((a, b) => a - b)).toEqual(reads.sort((a, b) => a - b));
    expect(lock.inspects).toBe(0);
    expect(ran.size).toBe(2500);
    for (const [name, fires] of ran) expect(fires, name).toEqual([3 * MIN]);
    await fake.advance(MIN);
    for (const [name, fires] of ran) expect(fires, name).toEqual([3 * MIN, 4 * MIN]);
    await stopOn(fake, again);
  });

  afterEach(() => void vi.restoreAllMocks());

  it('two instances starting together send about one catch-up claim per job, not two; each fire runs once', async () => {
    // one claim per job and instance would be 5,000. Both step at the same moments here (no
    // round trip: the worst case), each re-reading while the other's step is in flight; over
    // 40 seeds: 2,528-3,248 claims, median 2,670 (a shuffled order per instance: 2,939-3,020).
    // Seeds 11, 22 and 33 are draws where the two start close and, until two steps of mostly
    // lost claims make one move away, claimed side by side to the end (4,910-4,943 claims).
    for (const seed of [1, 11, 22, 33]) {
      vi.spyOn(Math, 'random').mockImplementation(seeded(seed));
      const fake = new FakeClock(0);
      const lock = new CountingLock(fake);
      const { fleet, ran } = await restartFleetWith(2, 2500, lock, fake);
      expect(ran.size).toBe(2500);
      for (const [name, fires] of ran) expect(fires, name).toEqual([3 * MIN]);
      const claims = [...lock.catchUpClaims.values()].reduce((sum, n) => sum + n, 0);
      expect(lock.catchUpClaims.size).toBe(2500);
      expect(claims, `seed ${seed}`).toBeLessThan(3300);
      await fake.advance(MIN);
      for (const [name, fires] of ran) expect(fires, name).toEqual([3 * MIN, 4 * MIN]);
      for (const s of fleet) await stopOn(fake, s);
      vi.restoreAllMocks();
    }
  });

  it('four instances starting together with 2,000 jobs: about one catch-up claim per job, the pass done in a few round trips', async () => {
    // each seeded draw of the instances' places on the claim ring is one repeatable run; the
    // pass before the ring (a random order per instance) sent ~2,500 claims in 15-17 round trips
    const roundTrip = 50;
    for (const seed of [1, 2, 3]) {
      vi.spyOn(Math, 'random').mockImplementation(seeded(seed));
      const fake = new FakeClock(0);
      const lock = new CountingLock(fake);
      const { fleet, ran, restartedAt } = await restartFleetWith(
        4,
        2000,
        lock,
        fake,
        quiet,
        roundTrip,
      );
      expect(ran.size).toBe(2000);
      for (const [name, fires] of ran) expect(fires, name).toEqual([3 * MIN]);
      const claims = [...lock.catchUpClaims.values()].reduce((sum, n) => sum + n, 0);
      expect(claims, `seed ${seed}`).toBeLessThan(2000 * 1.3);
      const passMs = lock.lastCatchUpAnswer - restartedAt;
      expect(passMs / roundTrip, `seed ${seed}: round trips of the pass`).toBeLessThanOrEqual(11);
      for (const s of fleet) await stopOn(fake, s);
      vi.restoreAllMocks();
    }
  });

  it.each([1, 2])(
    '%i instance(s), a pass not done a lease after the next regular fire: the jobs left are decided at once, the missed fire runs, then the held one (none lost, none twice)',
    async (instances) => {
      // 600 jobs restarted 1.5 s before their 4 min fire; every mark read takes 9 s (under the
      // read's bound, the 10 s lease), so the pass's three steps of 250 claims take ~27 s. At 4 min
      // + the lease the jobs whose turn has not come are taken out of the pass, read together and
      // claimed at once. Each held 4 min claim goes out once the job's 3 min run is done. Before:
      // the held claims went out alone at 4 min + the lease, moved the marks past 3 min, and the
      // pass's later claims of 3 min lost (~350 jobs never ran 3 min; under 'skip', never recorded
      // it); and the first step's 250 jobs sent their held 4 min claims right on their catch-up
      // claims' answers, met the 3 min runs' leases, and were answered busy: 4 min skipped
      const fake = new FakeClock(0);
      const lock = new CountingLock(fake);
      const jobs = 600;
      const ran = new Map<string, number[]>();
      const make = () => {
        const s = new Scheduler({ lock, clock: fake, logger: quiet, leaseMs: 10_000 });
        for (let i = 0; i < jobs; i++) {
          const name = `job-${i}`;
          s.add({
            name,
            trigger: every(MIN),
            catchUp: 'latest',
            run: async (ctx) => {
              ran.set(name, [...(ran.get(name) ?? []), ctx.fireAt.getTime()]);
              // the caught-up run takes 2 s: the held 4 min claim must not meet its lease
              if (ctx.fireAt.getTime() === 3 * MIN) await fake.sleep(2_000);
            },
          });
        }
        return s;
      };
      const first = make();
      first.start();
      await fake.advance(1.2 * MIN);
      await stopOn(fake, first);
      await fake.advance(4 * MIN - 1_500 - fake.now());
      ran.clear();
      lock.readMs = 9_000;
      const fleet = Array.from({ length: instances }, make);
      for (const s of fleet) s.start();
      // to 4:48.5: the pass's own steps end ~4:26; with two instances, the one that did not win a
      // job's catch-up sends its held 4 min claim a lease after its pass (answered lost)
      await fake.advance(50_000);
      expect(ran.size).toBe(jobs);
      for (const [name, fires] of ran) expect(fires, name).toEqual([3 * MIN, 4 * MIN]);
      const claims = [...lock.catchUpClaims.values()];
      expect(claims.length).toBe(jobs);
      // one catch-up claim per job and instance at most (one in all with one instance)
      expect(claims.filter((n) => n < 1 || n > instances)).toEqual([]);
      await fake.advance(MIN);
      for (const [name, fires] of ran) expect(fires, name).toEqual([3 * MIN, 4 * MIN, 5 * MIN]);
      for (const s of fleet) await stopOn(fake, s);
    },
  );

  it('a held fire whose caught-up run outlasts half the claim window is claimed then: busy, recorded skipped/overlap (never stale and unrecorded)', async () => {
    // the 3 min fire, caught up at ~4:08 after a 9 s mark read, runs 10 minutes; the held 4 min
    // fire waits for it at most until 4 min + half the 5 min window (6:30), then is answered
    // busy and recorded. Waiting for the run's end (4:18) would claim it 14 minutes late: stale,
    // no row at all
    const fake = new FakeClock(0);
    const lock = new CountingLock(fake);
    const store = new MemoryStore({ clock: fake });
    const make = () => {
      const s = new Scheduler({ lock, store, clock: fake, logger: quiet, leaseMs: 10_000 });
      s.add({
        name: 'long',
        trigger: every(MIN),
        catchUp: 'latest',
        overlap: 'skip',
        run: async (ctx) => {
          if (ctx.fireAt.getTime() === 3 * MIN) await ctx.clock.sleep(10 * MIN, ctx.signal);
        },
      });
      return s;
    };
    const first = make();
    first.start();
    await fake.advance(1.2 * MIN);
    await stopOn(fake, first);
    await fake.advance(4 * MIN - 1_500 - fake.now());
    lock.readMs = 9_000;
    const again = make();
    again.start();
    for (let t = 0; t < 3 * MIN; t += 10_000) await fake.advance(10_000); // to ~7 min
    const row = (await allHistory(store, 'long')).find((r) => r.fireAt === 4 * MIN);
    expect([row?.status, row?.reason]).toEqual(['skipped', 'overlap']);
    expect(row?.finishedAt).toBeLessThanOrEqual(4 * MIN + lock.windowMs / 2 + 1_000);
    let stopped = false;
    const stopping = again.stop().then(() => {
      stopped = true;
    });
    while (!stopped) await fake.advance(10_000); // stop() drains, then aborts the long run
    await stopping;
  });

  it('a lock without readMarks: one inspect per job, every job catches up', async () => {
    const fake = new FakeClock(0);
    const lock = withoutMarkReads(new CountingLock(fake));
    const { again, ran } = await restartWith(40, lock, fake);
    expect(lock.reads).toEqual([]);
    expect(lock.inspects).toBe(40);
    for (const [name, fires] of ran) expect(fires, name).toEqual([3 * MIN]);
    expect(ran.size).toBe(40);
    await stopOn(fake, again);
  });

  it('marks that cannot be read: a warning, no catch-up, and the regular fires run', async () => {
    const fake = new FakeClock(0);
    const lock = new CountingLock(fake);
    const warnings: string[] = [];
    const logger: Logger = { ...quiet, warn: (message) => void warnings.push(message) };
    const first = new Scheduler({ lock, clock: fake, logger });
    const ran: number[] = [];
    first.add({ name: 'job', trigger: every(MIN), catchUp: 'latest', run: () => {} });
    first.start();
    await fake.advance(1.2 * MIN);
    await stopOn(fake, first);
    await fake.advance(3.5 * MIN - fake.now());
    lock.failReads = true;
    const again = new Scheduler({ lock, clock: fake, logger });
    again.add({
      name: 'job',
      trigger: every(MIN),
      catchUp: 'latest',
      run: (ctx) => void ran.push(ctx.fireAt.getTime()),
    });
    again.start();
    await fake.advance(MIN);
    expect(warnings).toContain(
      'fleetcron: could not read the catch-up marks; no catch-up for these jobs',
    );
    expect(ran).toEqual([4 * MIN]); // 3 min not caught up; 4 min claimed on time
    await stopOn(fake, again);
  });
});
