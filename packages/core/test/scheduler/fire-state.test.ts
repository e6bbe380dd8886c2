// One fire as a state machine: FireRun owns its state and `done` resolves with its outcome,
// read by whoever launched it (here the test, through the fire path alone, no Scheduler).
import { describe, expect, it } from 'vitest';
import { every, FakeClock, type Logger, MemoryLock, MemoryStore } from '../../src/index.js';
import type { FireRun, FireState } from '../../src/scheduler/fire/index.js';
import { FirePath, HistoryWriter, logUnwritten } from '../../src/scheduler/fire/index.js';
import { LiveInstances } from '../../src/scheduler/fleet-control/index.js';
import { validateJob } from '../../src/scheduler/job/index.js';
import { LeaderGate } from '../../src/scheduler/leader/index.js';
import { Lifecycle } from '../../src/scheduler/lifecycle.js';
import { resolveOptions } from '../../src/scheduler/options.js';
import { ClockWatch, TimerQueue } from '../../src/scheduler/timing/index.js';
import { allHistory } from './helpers.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** A fire path on `lock` and a store, started (claims taken), with a job on `every(1 min)`. */
function firePath(lock: MemoryLock, fake: FakeClock, instanceId: string, run: () => unknown) {
  const store = new MemoryStore({ clock: fake });
  const options = resolveOptions({ lock, store, clock: fake, instanceId, logger: quiet });
  const clockWatch = new ClockWatch(fake, options.clockSkewWarnMs, quiet);
  const queue = new TimerQueue(clockWatch.clock, () => {});
  clockWatch.attach(queue);
  const history = new HistoryWriter(store, queue, logUnwritten(quiet));
  const life = new Lifecycle();
  life.start();
  const gate = new LeaderGate({ leader: options.leader, instanceId, clock: fake, log: quiet });
  const live = new LiveInstances(instanceId); // never read: no registry here
  const path = new FirePath({ options, history, queue, log: quiet, life, live, clockWatch, gate });
  const job = validateJob(
    { name: 'job', trigger: every(60_000), run },
    {
      existing: new Set(),
      defaultLeaseMs: options.leaseMs,
      capabilities: lock.capabilities,
      backend: lock.backend,
      now: fake.now(),
    },
  );
  return { path, job, store };
}

/** Records every state `fire` enters from now on (its `state` assignments, in order). */
function trace(fire: FireRun): FireState[] {
  const seen: FireState[] = [fire.state];
  let state = fire.state;
  Object.defineProperty(fire, 'state', {
    get: () => state,
    set: (next: FireState) => {
      state = next;
      if (seen.at(-1) !== next) seen.push(next);
    },
  });
  return seen;
}

/** Turns the fake clock until `fire` is done (at most 2 s). */
async function settle(fire: FireRun, fake: FakeClock): Promise<void> {
  let finished = false;
  void fire.done.then(() => {
    finished = true;
  });
  for (let i = 0; i < 200 && !finished; i++) await fake.advance(10);
  expect(finished).toBe(true);
}

describe('a fire is one state machine that returns its outcome', () => {
  it('won: claiming → held → running → recorded → released, done resolves with succeeded', async () => {
    const fake = new FakeClock(0);
    const lock = new MemoryLock({ clock: fake });
    let release = () => {};
    const running = new Promise<void>((r) => {
      release = r;
    });
    const { path, job, store } = firePath(lock, fake, 'a', () => running);
    const fire = path.launch(job, 0);
    const states = trace(fire);
    for (let i = 0; i < 20 && fire.state !== 'running'; i++) await fake.advance(10);
    expect(fire.state).toBe('running');
    release();
    await settle(fire, fake);
    expect(states).toEqual(['claiming', 'held', 'running', 'recorded', 'released']);
    expect(await fire.done).toEqual({ status: 'succeeded', reason: null });
    expect(fire.outcome).toEqual(await fire.done);
    expect((await allHistory(store, 'job')).map((r) => r.status)).toEqual(['succeeded']);
  });

  it('lost (another instance won the fire): claiming → released, done resolves with lost, no row', async () => {
    const fake = new FakeClock(0);
    const lock = new MemoryLock({ clock: fake });
    const winner = firePath(lock, fake, 'a', () => {});
    const loser = firePath(lock, fake, 'b', () => {});
    await winner.path.launch(winner.job, 0).done;
    const fire = loser.path.launch(loser.job, 0);
    const states = trace(fire);
    await settle(fire, fake);
    expect(states).toEqual(['claiming', 'released']);
    expect(await fire.done).toEqual({ status: 'lost', reason: null });
    expect(await allHistory(loser.store, 'job')).toEqual([]);
  });

  it('busy (the job’s lease is held by a run still going): recorded skipped/overlap, then released', async () => {
    const fake = new FakeClock(0);
    const lock = new MemoryLock({ clock: fake });
    const never = new Promise<void>(() => {});
    const { path, job, store } = firePath(lock, fake, 'a', () => never);
    const first = path.launch(job, 0);
    for (let i = 0; i < 20 && first.state !== 'running'; i++) await fake.advance(10);
    expect(first.state).toBe('running');
    await fake.advance(60_000); // the next fire's time; the first run still holds the lease
    expect(first.state).toBe('running');
    const second = path.launch(job, 60_000);
    const states = trace(second);
    await settle(second, fake);
    expect(states).toEqual(['claiming', 'recorded', 'released']);
    expect(await second.done).toEqual({ status: 'skipped', reason: 'overlap' });
    const rows = await allHistory(store, 'job');
    expect(rows.map((r) => [r.fireAt, r.status, r.reason ?? null])).toContainEqual([
      60_000,
      'skipped',
      'overlap',
    ]);
  });

  it('a fire launched again while handled here is not claimed twice: one run, one token (a lock re-grants its holder the live lease)', async () => {
    const fake = new FakeClock(0);
    const lock = new MemoryLock({ clock: fake });
    let runs = 0;
    let release = () => {};
    const running = new Promise<void>((r) => {
      release = r;
    });
    const { path, job, store } = firePath(lock, fake, 'a', () => {
      runs++;
      return running;
    });
    const first = path.launch(job, 0);
    for (let i = 0; i < 20 && first.state !== 'running'; i++) await fake.advance(10);
    expect(first.state).toBe('running');
    // the lock itself would answer the holder's second claim with the same lease
    const again = await lock.claim({
      key: 'job',
      fireAt: 0,
      owner: 'a',
      leaseMs: 30_000,
      exclusive: true,
    });
    expect(again.status).toBe('won');
    const claimed: string[] = [];
    const second = path.launch(job, 0, { onClaimed: (status) => claimed.push(status) });
    expect(second).toBe(first);
    expect(claimed).toEqual(['dropped']);
    release();
    await settle(first, fake);
    expect(runs).toBe(1);
    expect((await allHistory(store, 'job')).map((r) => [r.fireAt, r.status])).toEqual([
      [0, 'succeeded'],
    ]);
    // once handled, the identity is free again (the lock answers a later claim of it)
    const later = path.launch(job, 0);
    await settle(later, fake);
    expect(await later.done).toEqual({ status: 'lost', reason: null });
    expect(runs).toBe(1);
  });
});
