import { cron, every, FakeClock, MemoryLock, Scheduler, type Trigger } from '@fleetcron/core';

/** Figures of one scheduler holding many jobs. */
export interface SingleScaleResult {
  jobs: number;
  /** Time to `add()` every job (validation, trigger compile), ms. */
  addMs: number;
  /** Time of `start()` (first fire of every job computed and queued), ms. */
  startMs: number;
  /** Pending timers on a FakeClock after start (the design promises 1). */
  fakeClockTimers: number;
  /** Node `Timeout` handles added by the started real-clock scheduler. */
  activeTimeoutHandles: number;
  /** Resident set size before creating the scheduler, and its growth after start, bytes. */
  rssBefore: number;
  rssGrowth: number;
  /** V8 heap used growth after start (after a GC when exposed), bytes. */
  heapGrowth: number;
  /** CPU time (user + system) while idle with every job pending, as % of one core. */
  idleCpuPercent: number;
  idleSeconds: number;
  /** Earliest pending fire, ms after the idle window began (must lie beyond the window). */
  earliestFireInMs: number;
}

const countTimeouts = (): number =>
  process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

const gc = (): void => {
  (globalThis as { gc?: () => void }).gc?.();
};

/**
 * `jobs` jobs whose fires lie hours to months ahead: half cron (`m h 1 1 *`, compiled per
 * job), half `every(1 day)` with distinct anchors an hour or more ahead.
 */
export function farTriggers(jobs: number, now: number): Trigger[] {
  const triggers: Trigger[] = [];
  for (let i = 0; i < jobs; i++) {
    triggers.push(
      i % 2 === 0
        ? cron(`${i % 60} ${Math.floor(i / 60) % 24} 1 1 *`)
        : every(86_400_000, { anchor: now + 3_600_000 + i * 1000 }),
    );
  }
  return triggers;
}

/** Measures one scheduler with `jobs` jobs; run it in a fresh process for clean memory figures. */
export async function runSingleScale(
  jobs: number,
  idleSeconds: number,
): Promise<SingleScaleResult> {
  // FakeClock: counts the timers the scheduler holds, with no wall-clock waiting.
  const fake = new FakeClock(Date.now());
  const fakeScheduler = new Scheduler({ lock: new MemoryLock({ clock: fake }), clock: fake });
  farTriggers(jobs, fake.now()).forEach((trigger, i) => {
    fakeScheduler.add({ name: `fake-${i}`, trigger, run: () => {} });
  });
  fakeScheduler.start();
  const fakeClockTimers = fake.pendingTimers();
  await fakeScheduler.stop();

  gc();
  const timersBefore = countTimeouts();
  const rssBefore = process.memoryUsage().rss;
  const heapBefore = process.memoryUsage().heapUsed;
  const triggers = farTriggers(jobs, Date.now());
  const scheduler = new Scheduler({ lock: new MemoryLock() });
  const t0 = performance.now();
  triggers.forEach((trigger, i) => {
    scheduler.add({ name: `job-${i}`, trigger, run: () => {} });
  });
  const t1 = performance.now();
  scheduler.start();
  const t2 = performance.now();
  const activeTimeoutHandles = countTimeouts() - timersBefore;
  const idleStart = Date.now();
  const earliest = Math.min(
    ...scheduler.jobs().map((j) => j.nextFireAt?.getTime() ?? Number.POSITIVE_INFINITY),
  );
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - wall0;
  gc();
  const memory = process.memoryUsage();
  await scheduler.stop();
  return {
    jobs,
    addMs: t1 - t0,
    startMs: t2 - t1,
    fakeClockTimers,
    activeTimeoutHandles,
    rssBefore,
    rssGrowth: memory.rss - rssBefore,
    heapGrowth: memory.heapUsed - heapBefore,
    idleCpuPercent: ((cpu.user + cpu.system) / 1000 / wall) * 100,
    idleSeconds,
    earliestFireInMs: earliest - idleStart,
  };
}
