import { describe, expect, it } from 'vitest';
import {
  type ClaimRequest,
  every,
  FakeClock,
  type FleetcronEvent,
  MemoryElector,
  MemoryLock,
  Scheduler,
} from '../../src/index.js';
import {
  FireTimeGroups,
  MAX_PREPARE_AHEAD_MS,
  PREPARE_AHEAD_MS,
  PREPARE_MS_PER_FIRE,
} from '../../src/scheduler/job/job-slots.js';
import { TimerQueue } from '../../src/scheduler/timing/timer-queue.js';
import { BatchLock } from './batch-lock.js';
import { FlakyLock, recordEvents, settle, stopOnFakeClock } from './helpers.js';

const MIN = 60_000;

/** A scheduler on a recording batch lock with `jobs` jobs due every minute. */
function setup(jobs: number) {
  const fake = new FakeClock();
  const lock = new BatchLock(new MemoryLock({ clock: fake }));
  const s = new Scheduler({ lock, clock: fake, instanceId: 'a' });
  const runs: { job: string; fireAt: number; startedAt: number }[] = [];
  for (let i = 0; i < jobs; i++) {
    s.add({
      name: `job-${i}`,
      trigger: every(MIN),
      run: (ctx) =>
        void runs.push({
          job: ctx.job,
          fireAt: ctx.fireAt.getTime(),
          startedAt: ctx.startedAt.getTime(),
        }),
    });
  }
  const nextMinute = Math.ceil((fake.now() + 1) / MIN) * MIN;
  return { fake, lock, s, runs, nextMinute };
}

describe('fires are prepared ahead of their time; their claims leave at it', () => {
  it('prepared PREPARE_AHEAD_MS early, no claim leaves before the fire time; then one burst', async () => {
    const t = setup(300);
    const events = recordEvents();
    t.s.start();
    await t.fake.advanceTo(t.nextMinute - PREPARE_AHEAD_MS);
    await settle(t.fake);
    // prepared: the next fire of every job is planned, the fires are being handled ...
    const info = t.s.jobs();
    expect(info.every((j) => j.nextFireAt?.getTime() === t.nextMinute + MIN)).toBe(true);
    expect(info.every((j) => j.active === 1)).toBe(true);
    // ... and nothing was sent yet
    expect(t.lock.claimBatches).toHaveLength(0);
    await t.fake.advanceTo(t.nextMinute - 1);
    await settle(t.fake);
    expect(t.lock.claimBatches).toHaveLength(0);
    expect(t.runs).toHaveLength(0);
    // the fire time: every claim of the burst leaves in the batches of that one wake
    await t.fake.advanceTo(t.nextMinute);
    await settle(t.fake);
    expect(t.lock.claimBatches.map((b) => b.requests.length)).toEqual([256, 44]);
    expect(
      t.lock.claimBatches.flatMap((b) => b.requests).every((r) => r.fireAt === t.nextMinute),
    ).toBe(true);
    expect(t.runs).toHaveLength(300);
    expect(t.runs.every((r) => r.startedAt === t.nextMinute && r.fireAt === t.nextMinute)).toBe(
      true,
    );
    const claimEvents = events.events.filter((e: FleetcronEvent) => e.type.startsWith('claim.'));
    expect(claimEvents.every((e) => e.at >= t.nextMinute)).toBe(true);
    events.stop();
    await stopOnFakeClock(t.s, t.fake);
  }, 30_000);

  it('stop() during the lead drops the prepared fires at once, unsent, and returns', async () => {
    const t = setup(50);
    t.s.start();
    await t.fake.advanceTo(t.nextMinute - PREPARE_AHEAD_MS / 2);
    await settle(t.fake);
    expect(t.s.jobs().every((j) => j.active === 1)).toBe(true);
    let stopped = false;
    const stopping = t.s.stop().then(() => {
      stopped = true;
    });
    await settle(t.fake); // no timer fires: stop() must not wait for the fire time
    expect(stopped).toBe(true);
    await stopping;
    await t.fake.advanceTo(t.nextMinute + 1_000);
    await settle(t.fake);
    expect(t.lock.claimBatches).toHaveLength(0);
    expect(t.runs).toHaveLength(0);
  }, 30_000);

  it('remove() during the lead: the removed job does not run its prepared fire; the others do', async () => {
    const t = setup(3);
    t.s.start();
    await t.fake.advanceTo(t.nextMinute - PREPARE_AHEAD_MS / 2);
    await settle(t.fake);
    expect(t.s.remove('job-1')).toBe(true);
    await settle(t.fake);
    expect(t.s.jobs().map((j) => j.name)).toEqual(['job-0', 'job-2']);
    await t.fake.advanceTo(t.nextMinute);
    await settle(t.fake);
    const sent = t.lock.claimBatches.flatMap((b) => b.requests.map((r: ClaimRequest) => r.key));
    expect(sent.sort()).toEqual(['job-0', 'job-2']);
    expect(t.runs.map((r) => r.job).sort()).toEqual(['job-0', 'job-2']);
    await stopOnFakeClock(t.s, t.fake);
  }, 30_000);

  it('single claims (a lock without claimMany) wait for the fire time too', async () => {
    const fake = new FakeClock();
    const lock = new FlakyLock(new MemoryLock({ clock: fake }));
    const claimedAt: number[] = [];
    const claim = lock.claim.bind(lock);
    lock.claim = (request) => {
      claimedAt.push(fake.now());
      return claim(request);
    };
    const s = new Scheduler({ lock, clock: fake, instanceId: 'a' });
    for (let i = 0; i < 5; i++) s.add({ name: `j${i}`, trigger: every(MIN), run: () => {} });
    s.start();
    const nextMinute = Math.ceil((fake.now() + 1) / MIN) * MIN;
    await fake.advanceTo(nextMinute - 1);
    await settle(fake);
    expect(claimedAt).toEqual([]);
    await fake.advanceTo(nextMinute);
    await settle(fake);
    expect(claimedAt).toEqual(Array(5).fill(nextMinute));
    await stopOnFakeClock(s, fake);
  }, 30_000);

  it('leader mode is not prepared ahead: whether this instance leads is read at the fire time', async () => {
    const fake = new FakeClock();
    const lock = new MemoryLock({ clock: fake });
    const elector = new MemoryElector({ clock: fake });
    const s = new Scheduler({ lock, clock: fake, instanceId: 'a', mode: 'leader', elector });
    s.add({ name: 'tick', trigger: every(MIN), run: () => {} });
    s.start();
    const nextMinute = Math.ceil((fake.now() + 1) / MIN) * MIN;
    await fake.advanceTo(nextMinute - PREPARE_AHEAD_MS / 2);
    await settle(fake);
    expect(s.isLeader).toBe(true);
    expect(s.jobs()[0]).toMatchObject({ active: 0, nextFireAt: new Date(nextMinute) });
    await fake.advanceTo(nextMinute);
    await settle(fake);
    expect(s.jobs()[0]?.nextFireAt?.getTime()).toBe(nextMinute + MIN);
    await stopOnFakeClock(s, fake);
  }, 30_000);

  it('a bigger burst is prepared earlier: 3,000 fires due together, 3,000 × PREPARE_MS_PER_FIRE ahead', async () => {
    const t = setup(3_000);
    const lead = 3_000 * PREPARE_MS_PER_FIRE;
    expect(lead).toBeGreaterThan(PREPARE_AHEAD_MS);
    t.s.start();
    await t.fake.advanceTo(t.nextMinute - lead - 1);
    await settle(t.fake);
    expect(t.s.jobs().filter((j) => j.active > 0)).toHaveLength(0);
    // the group's entry is re-keyed each time the lead grows by a tenth: within a tenth of it
    await t.fake.advanceTo(t.nextMinute - Math.floor(lead / 1.1));
    await settle(t.fake);
    expect(t.s.jobs().filter((j) => j.active > 0)).toHaveLength(3_000);
    expect(t.lock.claimBatches).toHaveLength(0);
    await t.fake.advanceTo(t.nextMinute);
    await settle(t.fake);
    expect(t.runs).toHaveLength(3_000);
    await stopOnFakeClock(t.s, t.fake);
  }, 60_000);
});

describe('FireTimeGroups: one queue entry per fire time, keyed ahead by the size of its burst', () => {
  it('one entry per fire time; the lead grows with the group, within its bounds; members leave on remove', async () => {
    const fake = new FakeClock();
    const queue = new TimerQueue(fake, (e) => {
      throw e;
    });
    const due: [string, number][] = [];
    const groups = new FireTimeGroups<string>(queue, true, (m) => due.push([m, fake.now()]));
    expect(groups.leadFor(1)).toBe(PREPARE_AHEAD_MS);
    expect(groups.leadFor(10_000)).toBe(10_000 * PREPARE_MS_PER_FIRE);
    expect(groups.leadFor(10_000_000)).toBe(MAX_PREPARE_AHEAD_MS);
    const t = fake.now() + 60_000;
    for (let i = 0; i < 5_000; i++) groups.add(`a${i}`, t);
    groups.add('b', t + 1_000);
    expect(queue.size).toBe(2); // two fire times, two entries
    groups.remove('a7');
    groups.add('a8', t + 1_000); // moved
    await fake.advanceTo(t - 5_000 * PREPARE_MS_PER_FIRE - 1);
    expect(due).toEqual([]);
    await fake.advanceTo(t);
    const first = due.filter(([m]) => m.startsWith('a'));
    expect(first).toHaveLength(4_998); // 5,000 − a7 (removed) − a8 (moved)
    // keyed the last time the lead grew by a tenth: within a tenth of the full lead
    const at = first[0]?.[1] as number;
    expect(t - at).toBeGreaterThanOrEqual((5_000 * PREPARE_MS_PER_FIRE) / 1.1);
    expect(t - at).toBeLessThanOrEqual(5_000 * PREPARE_MS_PER_FIRE);
    await fake.advanceTo(t + 1_000);
    expect(due.slice(4_998).map(([m]) => m)).toEqual(['b', 'a8']);
    expect(queue.size).toBe(0);
    const leader = new FireTimeGroups<string>(queue, false, () => {});
    expect(leader.leadFor(10_000)).toBe(0);
  });
});
