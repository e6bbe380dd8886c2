/**
 * One instance process of the skew scenario, usually started under libfaketime so its wall
 * clock is off the real one by `skewMs`. It opens its own lock on the backend, registers `jobs`
 * one-shot jobs due at `fireAt` (plus a job of its own every second, so its scheduler has an
 * estimate of the backend's clock, as in a running fleet), waits until every job's claim was
 * answered or the deadline passed, and reports its runs with their start on the REAL clock
 * (its own clock minus the configured skew: libfaketime's offset is exact).
 */
import { at, every, type FleetcronEvent, Scheduler, subscribe } from '@fleetcron/core';
import { backendModules } from '../backends/index.js';
import type { SkewGo, SkewInstanceResult, SkewPrepare } from './protocol.js';

let prepared: SkewPrepare | null = null;

async function go(request: SkewGo): Promise<SkewInstanceResult> {
  const setup = prepared!;
  const module = backendModules[setup.backend];
  const owned = await module.lock(setup.connection, 4);
  const instanceId = `skew${setup.skewMs}-i${setup.index}-${process.pid}`;
  const result: SkewInstanceResult = {
    index: setup.index,
    skewMs: setup.skewMs,
    runs: [],
    claims: { won: 0, lost: 0, early: 0, busy: 0, failed: 0 },
    estimate: null,
  };
  const prefix = `${request.prefix}-`;
  let pending = request.jobs;
  let settled = () => {};
  const allAnswered = new Promise<void>((resolve) => {
    settled = resolve;
  });
  const unsubscribe = subscribe((event: FleetcronEvent) => {
    if (event.instanceId !== instanceId || !event.job?.startsWith(prefix)) return;
    if (event.type === 'claim.lost' && event.reason === 'early') result.claims.early++;
    else if (event.type === 'claim.won') result.claims.won++;
    else if (event.type === 'claim.lost') result.claims.lost++;
    else if (event.type === 'claim.busy') result.claims.busy++;
    else if (event.type === 'claim.failed') result.claims.failed++;
    else return;
    if (!(event.type === 'claim.lost' && event.reason === 'early') && --pending === 0) settled();
  });
  const scheduler = new Scheduler({ lock: owned.lock, instanceId, leaseMs: 30_000 });
  // a job of its own every second: its claims keep the estimate of the backend's clock fresh
  scheduler.add({ name: `warm-${instanceId}`, trigger: every(1000), run: () => {} });
  for (let job = 0; job < request.jobs; job++) {
    scheduler.add({
      name: `${prefix}${job}`,
      trigger: at(request.fireAt),
      run: (ctx) => {
        const realStart = Date.now() - setup.skewMs;
        result.runs.push({ job, latenessMs: realStart - ctx.fireAt.getTime() });
      },
    });
  }
  try {
    scheduler.start();
    let timer: NodeJS.Timeout | undefined;
    const deadline = request.fireAt + request.deadlineMs - (Date.now() - setup.skewMs);
    await Promise.race([
      allAnswered,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, Math.max(0, deadline));
      }),
    ]);
    clearTimeout(timer);
    result.estimate = scheduler.clockOffset();
  } finally {
    unsubscribe();
    await scheduler.stop({ drainMs: 5_000 });
    await owned.close();
  }
  return result;
}

process.on('message', (message: { id: number; request: SkewPrepare | SkewGo }) => {
  const { request } = message;
  const answer =
    request.type === 'skew-prepare'
      ? Promise.resolve().then(() => {
          prepared = request;
          return { ready: true };
        })
      : go(request);
  void answer.then(
    (value) => process.send?.({ id: message.id, ok: true, value }),
    (error: unknown) =>
      process.send?.({
        id: message.id,
        ok: false,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      }),
  );
});
process.on('disconnect', () => process.exit(0));
