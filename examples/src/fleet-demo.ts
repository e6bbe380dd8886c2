import {
  type Clock,
  every,
  offsetClock,
  realClock,
  Scheduler,
  type Store,
  subscribe,
} from '@fleetcron/core';
import type { DemoBackend } from './backends.js';

/** One simulated instance: a name and how far its wall clock is off. */
export interface DemoInstance {
  id: string;
  offsetMs: number;
}

/** The default fleet: one instance 2 s behind, one on time, one 3 s ahead. */
export const DEFAULT_INSTANCES: readonly DemoInstance[] = [
  { id: 'slow-2s', offsetMs: -2000 },
  { id: 'exact', offsetMs: 0 },
  { id: 'fast+3s', offsetMs: 3000 },
];

/** Options of {@link runFleetDemo}. */
export interface FleetDemoOptions {
  backend: DemoBackend;
  /** Backend name, for the header line. */
  backendName: string;
  /** How long the fleet runs. */
  seconds: number;
  /** Job period. Default 2000 ms. */
  everyMs?: number;
  /** The real clock (instances get offset views of it). Default `realClock`. */
  clock?: Clock;
  instances?: readonly DemoInstance[];
  /** Where lines go. Default `console.log`. */
  print?: (line: string) => void;
  /** Aborting ends the run early (Ctrl-C); the summary still counts what happened. */
  signal?: AbortSignal;
}

/** What the demo observed, counted over fires whose time lies inside the observed span. */
export interface FleetDemoResult {
  /** Fires expected in the span (every `everyMs`). */
  fires: number;
  /** Distinct fires that ran at all, inside the span or not (the first and last may lie outside). */
  ranInAll: number;
  /** Runs of those fires. */
  runs: number;
  /** Fires that ran more than once. */
  duplicates: number;
  /** Expected fires that neither ran nor were recorded as skipped by policy. */
  missed: number;
  /** Fires recorded as skipped by policy (overlap), for information. */
  skipped: number;
  /** Claims answered per outcome, over all instances. */
  claims: { won: number; lost: number; busy: number; failed: number };
}

/** Name of the demo's job. */
export const JOB = 'demo-job';
/** Fires later than (stop time − this) are not counted: the on-time instance may not have reached them. */
export const END_SLACK_MS = 1_000;

/** `HH:MM:SS.mmm` of an epoch-ms time, for the demo's lines. */
export const time = (ms: number) => new Date(ms).toISOString().slice(11, 23);

/** The one summary line the demo ends with. */
export function summaryLine(r: FleetDemoResult): string {
  return `fires ${r.fires} inside the observed span (${r.ranInAll} ran in all), runs ${r.runs}, duplicates ${r.duplicates}, missed ${r.missed}`;
}

/**
 * Counts, over the fires whose time lies inside `(from, to]`, how many ran, ran twice, or went
 * missing (neither ran nor were skipped by policy). Every one of those fires was passed by the
 * on-time instance while the whole fleet was up, so each must have run exactly once.
 */
export function tallyFires(observed: {
  from: number;
  to: number;
  everyMs: number;
  runs: ReadonlyMap<number, readonly string[]>;
  skipped: ReadonlySet<number>;
  claims: FleetDemoResult['claims'];
}): FleetDemoResult {
  const { from, to, everyMs, runs, skipped, claims } = observed;
  const result: FleetDemoResult = {
    fires: 0,
    ranInAll: [...runs.values()].filter((ran) => ran.length > 0).length,
    runs: 0,
    duplicates: 0,
    missed: 0,
    skipped: 0,
    claims,
  };
  for (let t = Math.floor(from / everyMs) * everyMs + everyMs; t <= to; t += everyMs) {
    result.fires++;
    const ran = runs.get(t)?.length ?? 0;
    result.runs += ran;
    if (ran > 1) result.duplicates++;
    if (ran === 0 && skipped.has(t)) result.skipped++;
    else if (ran === 0) result.missed++;
  }
  return result;
}

/** Fires of the demo job recorded as skipped in `store`. */
export async function skippedFires(store: Store | undefined): Promise<Set<number>> {
  const out = new Set<number>();
  if (!store) return out;
  let cursor: string | null = null;
  do {
    const page = await store.history(JOB, { limit: 1000, cursor });
    for (const e of page.executions) if (e.status === 'skipped') out.add(e.fireAt);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/**
 * Runs a simulated fleet: several schedulers with skewed clocks share one backend and one job,
 * printing each fire with the instance that won it. Then stops them (letting in-flight runs
 * finish) and counts, over the fires whose time lies inside the observed span, how many ran, ran
 * twice, or went missing.
 */
export async function runFleetDemo(options: FleetDemoOptions): Promise<FleetDemoResult> {
  const clock = options.clock ?? realClock;
  const everyMs = options.everyMs ?? 2000;
  const instances = options.instances ?? DEFAULT_INSTANCES;
  const print = options.print ?? ((line: string) => console.log(line));
  const { lock, store } = options.backend;
  const ids = new Set(instances.map((i) => i.id));

  const runs = new Map<number, string[]>();
  const claims = { won: 0, lost: 0, busy: 0, failed: 0 };
  const unsubscribe = subscribe((e) => {
    if (!ids.has(e.instanceId) || e.job !== JOB) return;
    if (e.type === 'claim.won') claims.won++;
    else if (e.type === 'claim.lost') claims.lost++;
    else if (e.type === 'claim.busy') claims.busy++;
    else if (e.type === 'claim.failed') claims.failed++;
  });

  const schedulers = instances.map(({ id, offsetMs }) => {
    const scheduler = new Scheduler({
      lock,
      store,
      clock: offsetClock(clock, offsetMs),
      instanceId: id,
      drainMs: 5_000,
    });
    scheduler.add({
      name: JOB,
      trigger: every(everyMs),
      // clocks skewed by a multiple of the period make different fires coincide in real time
      // (slow-2s runs fire T-2s when exact runs fire T); give each fire its own lease so the
      // demo shows pure claim behaviour. With the default 'skip' such a fire is recorded as
      // skipped (overlap) instead, and counted under "skipped by policy".
      overlap: 'allow',
      run: async (ctx) => {
        const fireAt = ctx.fireAt.getTime();
        runs.set(fireAt, [...(runs.get(fireAt) ?? []), ctx.instanceId]);
        print(
          `fire ${time(fireAt)}  won by ${ctx.instanceId.padEnd(8)} token ${String(ctx.token).padStart(3)}  (its clock read ${time(ctx.clock.now())})`,
        );
        await ctx.clock.sleep(50, ctx.signal); // a little work
      },
    });
    return scheduler;
  });

  print(
    `${instances.length} instances (${instances.map((i) => `${i.id} ${i.offsetMs >= 0 ? '+' : ''}${i.offsetMs} ms`).join(', ')}) on the ${options.backendName} backend; job every ${everyMs} ms for ${options.seconds} s`,
  );
  for (const s of schedulers) s.start();
  const from = clock.now();
  try {
    await clock.sleep(options.seconds * 1000, options.signal);
  } catch {
    print('interrupted: stopping the fleet');
  }
  const to = clock.now() - END_SLACK_MS;
  await Promise.all(schedulers.map((s) => s.stop()));
  unsubscribe();

  const skipped = await skippedFires(store);
  const result = tallyFires({ from, to, everyMs, runs, skipped, claims });
  print(
    `claims: won ${claims.won}, lost ${claims.lost}, busy ${claims.busy}, failed ${claims.failed}; skipped by policy ${result.skipped}`,
  );
  return result;
}
