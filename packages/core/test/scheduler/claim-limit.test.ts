import { describe, expect, it } from 'vitest';
import {
  type ClaimRequest,
  type ClaimResult,
  every,
  FakeClock,
  MemoryLock,
  Scheduler,
} from '../../src/index.js';
import { FlakyLock } from './helpers.js';

/** A lock whose claims answer only when the test says so, counting how many are in flight. */
class GatedLock extends FlakyLock {
  inFlight = 0;
  maxInFlight = 0;
  sent = 0;
  private readonly gates: Array<() => void> = [];
  override async claim(request: ClaimRequest): Promise<ClaimResult> {
    this.sent++;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await new Promise<void>((resolve) => this.gates.push(resolve));
    this.inFlight--;
    return super.claim(request);
  }
  /** Answers every claim sent so far. */
  openAll(): void {
    for (const open of this.gates.splice(0)) open();
  }
}

describe('maxConcurrentClaims', () => {
  it('sends at most maxConcurrentClaims claims at once and still runs every due fire', async () => {
    const fake = new FakeClock();
    const lock = new GatedLock(new MemoryLock({ clock: fake }));
    const scheduler = new Scheduler({ lock, clock: fake, instanceId: 'a', maxConcurrentClaims: 3 });
    const ran = new Set<string>();
    for (let i = 0; i < 20; i++) {
      scheduler.add({ name: `job-${i}`, trigger: every(60_000), run: (ctx) => ran.add(ctx.job) });
    }
    scheduler.start();
    await fake.advanceTo(Math.ceil((fake.now() + 1) / 60_000) * 60_000);
    expect(lock.sent).toBe(3);
    for (let round = 0; round < 10 && ran.size < 20; round++) {
      lock.openAll();
      await fake.flush();
    }
    expect(ran.size).toBe(20);
    expect(lock.maxInFlight).toBe(3);
    await scheduler.stop();
  });

  it('drops fires still waiting for a claim slot when stop() begins', async () => {
    const fake = new FakeClock();
    const lock = new GatedLock(new MemoryLock({ clock: fake }));
    const scheduler = new Scheduler({ lock, clock: fake, instanceId: 'a', maxConcurrentClaims: 2 });
    for (let i = 0; i < 10; i++) {
      scheduler.add({ name: `job-${i}`, trigger: every(60_000), run: () => {} });
    }
    scheduler.start();
    await fake.advanceTo(Math.ceil((fake.now() + 1) / 60_000) * 60_000);
    expect(lock.sent).toBe(2);
    const stopped = scheduler.stop({ drainMs: 0 });
    lock.openAll();
    await fake.flush();
    await fake.advance(1_000);
    await stopped;
    expect(lock.sent).toBe(2);
  });

  it('rejects a maxConcurrentClaims that is not a positive integer, naming the field', () => {
    const lock = new MemoryLock();
    expect(() => new Scheduler({ lock, maxConcurrentClaims: 0 })).toThrow(/maxConcurrentClaims/);
    expect(() => new Scheduler({ lock, maxConcurrentClaims: 1.5 })).toThrow(/maxConcurrentClaims/);
  });
});
