import { toError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import {
  decidesRunRequests,
  type FleetStore,
  type RunRequest,
  type TakenRunRequest,
} from '../../registry.js';
import { type RunRequestTakes, safeCall } from '../fire/index.js';
import type { QueueEntry, TimerQueue } from '../timing/index.js';
import { settleWithin } from '../timing/index.js';

/** With push (`watchRunRequests`), requests are also polled this many times less often. */
export const PUSH_FALLBACK_POLL_FACTOR = 10;

/** What the run-request listener needs. */
export interface RunRequestDeps {
  readonly store: FleetStore;
  readonly queue: TimerQueue;
  readonly instanceId: string;
  readonly pollMs: number;
  /** How long a take holds the requests it takes (`runRequestLeaseMs`). */
  readonly takeLeaseMs: number;
  readonly log: Logger;
  /** This scheduler's job names now. */
  jobNames(): string[];
  /** Runs one taken request as a manual fire. */
  run(request: RunRequest | TakenRunRequest): void;
}

/**
 * Picks up fleet run requests: takes them (`takeRunRequests(jobs, instanceId, { leaseMs })`:
 * each request is held by one take at a time, until it is decided, given back, or the take's
 * lease ends) whenever the store's push (`watchRunRequests`) says one of this
 * scheduler's jobs has one, and on a poll every `pollMs` without push (every
 * {@link PUSH_FALLBACK_POLL_FACTOR} × `pollMs` with push, in case a notification was lost). A
 * failing store is logged and never reaches a fire.
 */
export class RunRequestListener {
  private timer: QueueEntry | null = null;
  private unwatch: (() => void) | null = null;
  private taking: Promise<void> | null = null;
  private again = false;
  private running = false;

  constructor(private readonly deps: RunRequestDeps) {}

  /** Subscribes (when the store can push) and takes the requests already waiting. */
  start(): void {
    if (this.running) return;
    this.running = true;
    const { store } = this.deps;
    if (store.watchRunRequests) {
      try {
        this.unwatch = store.watchRunRequests((job) => {
          if (this.deps.jobNames().includes(job)) this.take();
        });
      } catch (error) {
        this.deps.log.warn('fleetcron: could not watch run requests; polling', {
          error: toError(error),
        });
      }
    }
    this.take();
  }

  /** Unsubscribes, stops polling and waits for a take in flight. Never rejects. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) this.deps.queue.cancel(this.timer);
    this.timer = null;
    try {
      this.unwatch?.();
    } catch {
      // unsubscribing is best effort
    }
    this.unwatch = null;
    await this.taking;
  }

  /** Takes waiting requests now (once more after a take in flight, when one is). */
  take(): void {
    if (!this.running) return;
    if (this.taking) {
      this.again = true;
      return;
    }
    if (this.timer) this.deps.queue.cancel(this.timer);
    this.timer = null;
    this.taking = this.takeOnce().finally(() => {
      this.taking = null;
      if (this.again) {
        this.again = false;
        this.take();
      } else this.schedulePoll();
    });
  }

  private schedulePoll(): void {
    if (!this.running) return;
    const { pollMs, queue } = this.deps;
    const ms = this.unwatch ? pollMs * PUSH_FALLBACK_POLL_FACTOR : pollMs;
    this.timer = queue.after(ms, () => {
      this.timer = null;
      this.take();
    });
  }

  private async takeOnce(): Promise<void> {
    const { store, instanceId, pollMs, takeLeaseMs: leaseMs, queue, log } = this.deps;
    const jobs = this.deps.jobNames();
    if (jobs.length === 0) return;
    const bound = Math.max(pollMs, 5_000);
    try {
      const noAnswer = () => new Error(`takeRunRequests: no answer within ${bound} ms`);
      const taken = safeCall(() => store.takeRunRequests(jobs, instanceId, { leaseMs }));
      const requests = await settleWithin(taken, bound, noAnswer, queue);
      for (const request of requests) this.deps.run(request);
    } catch (error) {
      log.warn('fleetcron: could not take run requests; fires are not affected', {
        error: toError(error),
      });
    }
  }
}

/** How long giving a request back may take before it is left to its take's lease, ms. */
export const RELEASE_BOUND_MS = 5_000;

/**
 * How this instance decides and gives back the requests it took, when `store` decides requests
 * (`decideRunRequest`, `releaseRunRequest`); `null` for a store that removes them when taken.
 */
export function runRequestTakes(
  store: FleetStore,
  deps: { readonly instanceId: string; readonly queue: TimerQueue; readonly log: Logger },
): RunRequestTakes | null {
  if (!decidesRunRequests(store)) return null;
  const { instanceId, queue, log } = deps;
  return {
    decide: (request, fireAt) =>
      store.decideRunRequest(request.id, request.takeId, { fireAt, instanceId }),
    async release(request, why) {
      try {
        const noAnswer = () =>
          new Error(`releaseRunRequest: no answer within ${RELEASE_BOUND_MS} ms`);
        const released = safeCall(() => store.releaseRunRequest(request.id, request.takeId));
        await settleWithin(released, RELEASE_BOUND_MS, noAnswer, queue);
      } catch (error) {
        log.warn(
          'fleetcron: could not give a run request back; another instance takes it after its take lease',
          {
            ...{ request: request.id, job: request.job, why },
            error: toError(error),
          },
        );
      }
    },
  };
}
