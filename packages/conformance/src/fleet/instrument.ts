import type {
  ClaimRequest,
  ClaimResult,
  Execution,
  FleetStore,
  JobContext,
  Lease,
  Lock,
  Store,
} from '@fleetcron/core';
import type { AfterTakeFault } from './child-config.js';
import type { Ledger } from './ledger.js';
import { methodNames } from './remote.js';

/** Where a freeze scenario freezes its holder. */
export type FreezePoint =
  /** Inside the claim round trip: the backend answered `won`, the scheduler has not seen it. */
  | 'claim'
  /** Between claim and job start: inside the first store call after the won claim. */
  | 'store'
  /** Inside the job. */
  | 'job';

/**
 * Springs once, at its point, on the first won claim of its instance: writes a `freeze` line,
 * then calls `block`, which returns only when the freeze is over, then writes a `thaw` line.
 * `block` must block synchronously (a read of a pipe, `Atomics.wait`): that is what pins the
 * freeze to the point.
 */
export class FreezeTrap {
  /** Token of the frozen claim, once the trap sprang. */
  frozenToken: number | null = null;
  private won: { fireAt: number; token: number } | null = null;
  private sprung = false;

  constructor(
    readonly point: FreezePoint,
    private readonly instance: string,
    private readonly ledger: Ledger,
    private readonly block: () => void,
  ) {}

  /** Whether the trap has sprung. */
  get hasSprung(): boolean {
    return this.sprung;
  }

  /** The lock wrapper saw a won claim. */
  noteWon(fireAt: number, token: number): void {
    if (this.won === null) this.won = { fireAt, token };
  }

  /** Called at `point`; freezes when it is the trap's point and a claim was won. */
  reach(point: FreezePoint): void {
    if (this.sprung || point !== this.point || this.won === null) return;
    this.sprung = true;
    this.frozenToken = this.won.token;
    const line = { instance: this.instance, point, ...this.won };
    this.ledger.write({ kind: 'freeze', ...line });
    this.block();
    this.ledger.write({ kind: 'thaw', ...line });
  }
}

/** Ledger and (optionally) trap of one instance. */
export interface Instrumentation {
  ledger: Ledger;
  instance: string;
  trap?: FreezeTrap;
}

/**
 * Wraps a lock: every claim and renewal, single or batched (`claimMany`, `extendMany`), and every
 * hand-back (`withdraw`) is written to the ledger; a won claim may spring the trap (after the whole batch's answer, before the
 * scheduler sees it).
 */
export function instrumentLock(inner: Lock, { ledger, instance, trap }: Instrumentation): Lock {
  const sending = (request: ClaimRequest) => {
    const { fireAt, key, catchUp } = request;
    ledger.write({ kind: 'claim', instance, fireAt, job: key, catchUp: catchUp !== undefined });
  };
  const answered = (request: ClaimRequest, result: ClaimResult) => {
    const { fireAt, key } = request;
    const catchUp = request.catchUp !== undefined;
    const token = result.status === 'won' ? result.lease.token : null;
    const status = result.status === 'lost' ? `lost/${result.reason}` : result.status;
    ledger.write({ kind: 'claimed', instance, fireAt, job: key, token, status, catchUp });
    if (result.status === 'won') trap?.noteWon(fireAt, result.lease.token);
  };
  const renewing = async (
    leases: readonly Lease[],
    renew: () => Promise<(Lease | null)[]>,
  ): Promise<(Lease | null)[]> => {
    for (const { fireAt, token } of leases) {
      ledger.write({ kind: 'extend', instance, fireAt, token });
    }
    try {
      const renewed = await renew();
      leases.forEach(({ fireAt, token }, i) => {
        const status = renewed[i] ? 'renewed' : 'lost';
        ledger.write({ kind: 'extended', instance, fireAt, token, status });
      });
      return renewed;
    } catch (error) {
      for (const { fireAt, token } of leases) {
        ledger.write({ kind: 'extended', instance, fireAt, token, status: 'failed' });
      }
      throw error;
    }
  };
  const lock: Lock = {
    backend: inner.backend,
    capabilities: inner.capabilities,
    windowMs: inner.windowMs,
    async claim(request) {
      sending(request);
      const result = await inner.claim(request);
      answered(request, result);
      if (result.status === 'won') trap?.reach('claim');
      return result;
    },
    async extend(lease, leaseMs) {
      const [renewed] = await renewing([lease], async () => [await inner.extend(lease, leaseMs)]);
      return renewed ?? null;
    },
    release: (lease) => inner.release(lease),
    inspect: (key) => inner.inspect(key),
  };
  const { claimMany, extendMany, withdraw } = inner;
  if (withdraw) {
    // a won claim handed back unrun (lease expired before the run, stop()): a fire that was won
    // and never started shows why in the ledger
    lock.withdraw = (lease) => {
      const { fireAt, token, key } = lease;
      ledger.write({ kind: 'withdraw', instance, fireAt, token, job: key });
      return withdraw.call(inner, lease);
    };
  }
  if (claimMany) {
    lock.claimMany = async (requests, options) => {
      for (const request of requests) sending(request);
      const results = await claimMany.call(inner, requests, options);
      for (const [i, result] of results.entries()) answered(requests[i]!, result);
      if (results.some((r) => r.status === 'won')) trap?.reach('claim');
      return results;
    };
  }
  if (extendMany) {
    lock.extendMany = (leases, leaseMs, options) =>
      renewing(leases, () => extendMany.call(inner, leases, leaseMs, options));
  }
  return forwardOthers(inner, lock);
}

/** Copies every method of `inner` that `outer` lacks (optional ones: withdraw, fleet control). */
function forwardOthers<T extends object>(inner: T, outer: T): T {
  const source = inner as unknown as Record<string, (...args: unknown[]) => unknown>;
  const target = outer as unknown as Record<string, unknown>;
  for (const name of methodNames(inner)) {
    if (!(name in target)) target[name] = source[name]!.bind(inner);
  }
  return outer;
}

/**
 * Wraps a store: the first paused-flag read or `running` write after a won claim may spring the
 * trap (after the store answered, before the scheduler sees the answer).
 */
export function instrumentStore(inner: Store, trap?: FreezeTrap): Store {
  return forwardOthers(inner, {
    backend: inner.backend,
    async record(execution: Execution) {
      await inner.record(execution);
      if (execution.status === 'running') trap?.reach('store');
    },
    history: (job, query) => inner.history(job, query),
    prune: (before) => inner.prune(before),
    async getJobState(job) {
      const state = await inner.getJobState(job);
      trap?.reach('store');
      return state;
    },
    setPaused: (job, paused, options) =>
      options === undefined ? inner.setPaused(job, paused) : inner.setPaused(job, paused, options),
  });
}

/** How long the ledger job works after its start line, ms. */
export const JOB_WORK_MS = 50;

/**
 * The job of the freeze scenarios: writes `start`, works {@link JOB_WORK_MS} asynchronously, may
 * spring the trap (point `job`), writes `end`. Every abort of its signal is written too,
 * also one that comes after the job returned.
 */
export function ledgerJob(
  { ledger, trap }: Instrumentation,
  workMs = JOB_WORK_MS,
  fails = false,
): (ctx: JobContext) => Promise<void> {
  return async (ctx) => {
    const line = {
      instance: ctx.instanceId,
      job: ctx.job,
      fireAt: ctx.fireAt.getTime(),
      token: ctx.token,
      ...(ctx.shard ? { shard: { ...ctx.shard } } : {}),
    };
    const onAbort = () => ledger.write({ kind: 'abort', ...line });
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener('abort', onAbort, { once: true });
    const { recovery, requestedBy, request } = ctx;
    ledger.write({
      kind: 'start',
      ...line,
      recovery: recovery === true,
      requestedBy: requestedBy ?? null,
      ...(request ? { request: { id: request.id, data: request.data } } : {}),
    });
    await new Promise((resolve) => setTimeout(resolve, workMs));
    // frozen at the end of its work: after the thaw the job settles at once, before any timer
    // of the scheduler can run, so only a check at settle time can tell that the lease is gone
    trap?.reach('job');
    ledger.write({ kind: 'end', ...line, aborted: ctx.signal.aborted });
    if (fails) throw new Error(`${ctx.job}: planned failure of the fire ${line.fireAt}`);
  };
}

/**
 * Wraps a store so that its first take that returns run requests writes a `take` line (the
 * request ids) and then meets `fault`: `hang` (the reply never comes back: the parent SIGKILLs
 * the process), `loseReply` (the scheduler gets nothing this once), `stop` (`stop()` is called as
 * the reply is handed on). The store took the requests all the same.
 */
export function afterTakeStore(
  inner: Store,
  fault: AfterTakeFault,
  at: { ledger: Ledger; instance: string; stop: () => void },
): Store {
  let sprung = false;
  return forwardOthers(inner, {
    backend: inner.backend,
    async takeRunRequests(jobs: readonly string[], instanceId: string, options?: object) {
      const take = (inner as FleetStore).takeRunRequests.bind(inner);
      const taken = await take(jobs, instanceId, options);
      if (sprung || taken.length === 0) return taken;
      sprung = true;
      at.ledger.write({ kind: 'take', instance: at.instance, requestIds: taken.map((r) => r.id) });
      if (fault === 'hang') return new Promise<never>(() => {});
      if (fault === 'loseReply') return [];
      at.stop();
      return taken;
    },
  } as Store);
}
