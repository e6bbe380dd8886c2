import { describe, expect, it } from 'vitest';
import {
  type ClaimRequest,
  type ClaimResult,
  every,
  FakeClock,
  type Logger,
  MemoryLock,
  offsetClock,
  Scheduler,
} from '../../src/index.js';
import { recordEvents, withoutMarkReads } from './helpers.js';

/** A scheduler whose clock runs `skewMs` off the MemoryLock's (the backend's) clock. */
function skewed(
  skewMs: number,
  options: { fake?: FakeClock; lock?: MemoryLock; logger?: Logger } = {},
) {
  const fake = options.fake ?? new FakeClock(Date.UTC(2026, 0, 1, 0, 0, 0, 500));
  const lock = options.lock ?? new MemoryLock({ clock: fake });
  const starts: { fireAt: number; backendAt: number; ctxStartedAt: number; ctxNow: number }[] = [];
  const scheduler = new Scheduler({
    lock,
    clock: offsetClock(fake, skewMs),
    instanceId: 'skewed',
    ...(options.logger ? { logger: options.logger } : {}),
  });
  scheduler.add({
    name: 'tick',
    trigger: every(1000),
    run: (ctx) => {
      starts.push({
        fireAt: ctx.fireAt.getTime(),
        backendAt: fake.now(),
        ctxStartedAt: ctx.startedAt.getTime(),
        ctxNow: ctx.clock.now(),
      });
    },
  });
  return { fake, lock, scheduler, starts };
}

describe("the fleet's clock: a scheduler whose clock is off the backend's", () => {
  it('a clock 3 s fast: learns the fleet clock at start(); every fire is claimed on time, none refused early', async () => {
    const rec = recordEvents();
    const { fake, scheduler, starts } = skewed(3000);
    expect(scheduler.clockOffset()).toBeNull();
    scheduler.start();
    await fake.flush(); // the mark read at start() is answered with the backend's time
    expect(scheduler.clockOffset()).toMatchObject({ offsetMs: -3000, rttMs: 0 });
    await fake.advance(10_000);
    await scheduler.stop();
    rec.stop();
    // started 0.5 s into the backend's minute: every fire from 1 s on, by the backend's clock
    expect(starts.map((s) => (s.fireAt - Date.UTC(2026, 0, 1)) / 1000)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
    ]);
    for (const s of starts) {
      expect(s.backendAt, `fire ${s.fireAt} started by the backend's clock`).toBe(s.fireAt);
      expect(s.ctxStartedAt).toBe(s.backendAt);
      expect(s.ctxNow).toBe(s.backendAt);
    }
    expect(rec.events.filter((e) => e.type === 'claim.lost')).toEqual([]);
    const started = rec.events.filter((e) => e.type === 'run.started');
    expect(started.length).toBeGreaterThan(0);
    expect(started.every((e) => e.type === 'run.started' && e.lagMs === 0)).toBe(true);
  });

  it('a clock 2 s slow: learns the fleet clock at start(); the first fire starts on time too', async () => {
    const { fake, scheduler, starts } = skewed(-2000);
    scheduler.start();
    await fake.advance(10_000);
    await scheduler.stop();
    expect(scheduler.clockOffset()).toMatchObject({ offsetMs: 2000 });
    expect(starts.map((s) => (s.fireAt - Date.UTC(2026, 0, 1)) / 1000)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
    ]);
    for (const s of starts) expect(s.backendAt).toBe(s.fireAt);
  });

  it('a clock 3 s fast, lock without readMarks: the early refusal is claimed again on time; ctx times are the backend’s', async () => {
    const rec = recordEvents();
    const fake = new FakeClock(Date.UTC(2026, 0, 1, 0, 0, 0, 500));
    const lock = withoutMarkReads(new MemoryLock({ clock: fake }));
    const { scheduler, starts } = skewed(3000, { fake, lock });
    expect(scheduler.clockOffset()).toBeNull();
    scheduler.start();
    await fake.advance(10_000);
    await scheduler.stop();
    rec.stop();
    // alone and 3 s ahead, it first considers the fire 3 s after the backend's now: 4 s .. 10 s
    expect(starts.map((s) => (s.fireAt - Date.UTC(2026, 0, 1)) / 1000)).toEqual([
      4, 5, 6, 7, 8, 9, 10,
    ]);
    for (const s of starts) {
      expect(s.backendAt, `fire ${s.fireAt} started by the backend's clock`).toBe(s.fireAt);
      expect(s.ctxStartedAt).toBe(s.backendAt);
      expect(s.ctxNow).toBe(s.backendAt);
    }
    expect(scheduler.clockOffset()).toMatchObject({ offsetMs: -3000, rttMs: 0 });
    const first = rec.events.filter((e) => e.fireAt === starts[0]!.fireAt).map((e) => e.type);
    expect(first).toEqual(
      expect.arrayContaining(['claim.lost', 'clock.offset', 'claim.won', 'run.started']),
    );
    expect(first.indexOf('claim.lost')).toBeLessThan(first.indexOf('claim.won'));
    const started = rec.events.filter((e) => e.type === 'run.started');
    expect(started.length).toBeGreaterThan(0);
    expect(started.every((e) => e.type === 'run.started' && e.lagMs === 0)).toBe(true);
  });

  it('a clock 2 s slow, lock without readMarks: after the first answer, fires start on time by the backend’s clock', async () => {
    const fake = new FakeClock(Date.UTC(2026, 0, 1, 0, 0, 0, 500));
    const lock = withoutMarkReads(new MemoryLock({ clock: fake }));
    const { scheduler, starts } = skewed(-2000, { fake, lock });
    scheduler.start();
    await fake.advance(10_000);
    await scheduler.stop();
    expect(scheduler.clockOffset()).toMatchObject({ offsetMs: 2000 });
    const onTime = starts.slice(1); // the first fire was claimed by the slow clock, 2 s late
    expect(onTime.length).toBeGreaterThanOrEqual(8);
    for (const s of onTime) expect(s.backendAt).toBe(s.fireAt);
  });

  it('warns once when the offset exceeds clockSkewWarnMs', async () => {
    const warnings: string[] = [];
    const logger: Logger = {
      debug: () => {},
      info: () => {},
      warn: (message) => warnings.push(message),
      error: () => {},
    };
    const { fake, scheduler } = skewed(3000, { logger });
    scheduler.start();
    await fake.advance(5_000);
    await scheduler.stop();
    expect(warnings.filter((w) => w.includes("off the backend's clock"))).toHaveLength(1);
  });

  it('stop() while a fire waits to claim again after an early refusal: dropped at once', async () => {
    const fake = new FakeClock(Date.UTC(2026, 0, 1, 0, 0, 0, 500));
    // a lock that refuses everything as early without telling its time: the fire keeps waiting
    class AlwaysEarly extends MemoryLock {
      claims = 0;
      override async claim(request: ClaimRequest): Promise<ClaimResult> {
        this.claims++;
        return { status: 'lost', key: request.key, fireAt: request.fireAt, reason: 'early' };
      }
      // batched claims (the scheduler's path for locks with claimMany) answer the same
      override claimMany(requests: readonly ClaimRequest[]): Promise<ClaimResult[]> {
        return Promise.all(requests.map((r) => this.claim(r)));
      }
    }
    const lock = new AlwaysEarly({ clock: fake });
    const { scheduler } = skewed(0, { fake, lock });
    scheduler.start();
    await fake.advance(1_000); // the first fire was refused; its retry waits
    expect(lock.claims).toBeGreaterThanOrEqual(1);
    let stopped = false;
    const stopping = scheduler.stop().then(() => {
      stopped = true;
    });
    await fake.advance(0);
    await stopping;
    expect(stopped).toBe(true);
    expect(fake.pendingTimers()).toBe(0);
  });

  it('gives up after MAX_EARLY_RETRIES refusals, leaving the fire to the other instances', async () => {
    const fake = new FakeClock(Date.UTC(2026, 0, 1, 0, 0, 0, 500));
    class AlwaysEarly extends MemoryLock {
      byFire = new Map<number, number>();
      override async claim(request: ClaimRequest): Promise<ClaimResult> {
        this.byFire.set(request.fireAt, (this.byFire.get(request.fireAt) ?? 0) + 1);
        return { status: 'lost', key: request.key, fireAt: request.fireAt, reason: 'early' };
      }
      override claimMany(requests: readonly ClaimRequest[]): Promise<ClaimResult[]> {
        return Promise.all(requests.map((r) => this.claim(r)));
      }
    }
    const lock = new AlwaysEarly({ clock: fake });
    const { scheduler, starts } = skewed(0, { fake, lock });
    scheduler.start();
    await fake.advance(30_000);
    await scheduler.stop();
    expect(starts).toEqual([]);
    const first = [...lock.byFire.values()][0];
    expect(first).toBe(9); // the claim and 8 retries
  });
});
