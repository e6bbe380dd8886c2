import type { Claimer } from '../backends/types.js';
import { Reservoir } from '../stats.js';

/** What one worker measured in one slice (a timed run of one variant on one key). */
export interface SliceResult {
  /** Fires 0..steps-1 were claimed by every instance of this worker. */
  steps: number;
  /** Wall time from the common start to this worker's last answer, ms. */
  elapsedMs: number;
  claims: number;
  won: number;
  lost: number;
  busy: number;
  /** Claims that threw (backend did not answer). */
  errors: number;
  /** Sampled claim latencies, ms (at most `sampleCap`). */
  latencies: number[];
  /** Sampled release latencies of winners, ms. */
  releaseLatencies: number[];
  /** Fire index of every win, in order. */
  wins: Int32Array;
  /** Instance (global index) of every win, parallel to `wins`. */
  winners: Int32Array;
  /** Fire indices whose claim threw. */
  errorFires: Int32Array;
  /** Releases that threw. */
  releaseErrors: number;
}

/** How one worker runs its slice. */
export interface SliceRun {
  key: string;
  /** fireAt of fire 0; fire i is `base + i` ms (distinct fires, all inside the claim window). */
  base: number;
  /** Epoch ms (wall clock, shared by the processes of this machine) at which all workers start. */
  startAt: number;
  durationMs: number;
  /** Global index of each of this worker's instances, in the order of its claimers. */
  instances: number[];
  sampleCap: number;
  /** Stop after this many fires even before the deadline (keeps fires inside the window). */
  maxSteps: number;
}

/** Instance ids of the contention scenario: the owner string of global instance `index`. */
export const instanceOwner = (index: number): string => `bench-i${index}`;

/**
 * Warms every claimer (connection, prepared scripts, etcd lease pool) with a few claims on a
 * separate key, so the timed slice measures steady state.
 */
export async function warm(claimers: readonly Claimer[], key: string, base: number): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await Promise.all(
      claimers.map(async (claimer) => {
        const attempt = await claimer.claim(`${key}:warm`, base - 1000 - i);
        if (attempt.status === 'won' && attempt.release) await attempt.release();
      }),
    );
  }
}

/**
 * The contention loop of one worker: at each step every instance of the worker claims the same
 * fire at once (as a fleet does when a fire falls due), the winner releases its lease, then the
 * worker moves to the next fire. Runs from `startAt` for `durationMs`.
 */
export async function runSlice(claimers: readonly Claimer[], run: SliceRun): Promise<SliceResult> {
  const wait = run.startAt - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  const latency = new Reservoir(run.sampleCap, 0x51ed + (run.instances[0] ?? 0));
  const releaseLatency = new Reservoir(run.sampleCap, 0x7e1 + (run.instances[0] ?? 0));
  const wins: number[] = [];
  const winners: number[] = [];
  const errorFires: number[] = [];
  const counts = { claims: 0, won: 0, lost: 0, busy: 0, errors: 0, releaseErrors: 0 };
  const started = performance.now();
  const deadline = started + run.durationMs;
  let step = 0;

  const attempt = async (claimer: Claimer, instance: number, fire: number): Promise<void> => {
    const t0 = performance.now();
    let outcome: Awaited<ReturnType<Claimer['claim']>>;
    try {
      outcome = await claimer.claim(run.key, run.base + fire);
    } catch {
      counts.errors++;
      errorFires.push(fire);
      return;
    } finally {
      counts.claims++;
    }
    latency.add(performance.now() - t0);
    if (outcome.status !== 'won') {
      counts[outcome.status]++;
      return;
    }
    counts.won++;
    wins.push(fire);
    winners.push(instance);
    if (outcome.release) {
      const t1 = performance.now();
      try {
        await outcome.release();
        releaseLatency.add(performance.now() - t1);
      } catch {
        counts.releaseErrors++;
      }
    }
  };

  while (performance.now() < deadline && step < run.maxSteps) {
    const fire = step++;
    await Promise.all(claimers.map((c, i) => attempt(c, run.instances[i] ?? -1, fire)));
  }
  return {
    steps: step,
    elapsedMs: performance.now() - started,
    ...counts,
    latencies: latency.values,
    releaseLatencies: releaseLatency.values,
    wins: Int32Array.from(wins),
    winners: Int32Array.from(winners),
    errorFires: Int32Array.from(errorFires),
  };
}
