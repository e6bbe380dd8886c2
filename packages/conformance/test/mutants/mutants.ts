import {
  type ClaimRequest,
  type ClaimResult,
  type Execution,
  type HistoryPage,
  type HistoryQuery,
  type Lease,
  MemoryLock,
  type MemoryLockOptions,
  MemoryStore,
} from '@fleetcron/core';
import { internals } from './internals.js';

/**
 * Deliberately broken locks. Each breaks one rule of the contract; the suite's own tests expect
 * the scenario named for that rule to fail against it (and every scenario to pass on MemoryLock).
 */

/** (a) Deletes the fire's claim record on release, so a late claimer can run the fire again. */
export class ForgetsClaimOnRelease extends MemoryLock {
  override async release(lease: Lease): Promise<boolean> {
    const released = await super.release(lease);
    internals(this).keys.get(lease.key)?.fires.delete(lease.fireAt);
    return released;
  }
}

/** (b) A plain high-water mark: refuses any fire older than the newest one claimed. */
export class HighWaterMark extends MemoryLock {
  private readonly newest = new Map<string, number>();
  override async claim(request: ClaimRequest): Promise<ClaimResult> {
    const { key, fireAt } = request;
    const mark = this.newest.get(key) ?? Number.NEGATIVE_INFINITY;
    if (fireAt < mark) return { status: 'lost', key, fireAt, reason: 'claimed' };
    this.newest.set(key, Math.max(mark, fireAt));
    return super.claim(request);
  }
}

/** (c) Releases whatever lease holds the slot, ignoring the token. */
export class ReleaseIgnoresToken extends MemoryLock {
  override async release(lease: Lease): Promise<boolean> {
    const slot = lease.exclusive ? 'x' : String(lease.fireAt);
    const current = internals(this).keys.get(lease.key)?.leases.get(slot);
    return super.release(current ? { ...lease, token: current.token } : lease);
  }
}

/** (d) Tokens repeat: the counter steps back on release (a counter of live leases). */
export class TokensRepeat extends MemoryLock {
  override async release(lease: Lease): Promise<boolean> {
    const released = await super.release(lease);
    const state = internals(this).keys.get(lease.key);
    if (released && state) state.lastToken--;
    return released;
  }
}

/** (e) Never collects claim records: storage grows without bound. */
export class NeverCollects extends MemoryLock {
  constructor(options: MemoryLockOptions) {
    super(options);
    const state = internals(this);
    const collect = state.collect.bind(this);
    // keep collecting expired leases, never claim records
    state.collect = (key: unknown, now: number) => {
      const s = key as { fires: Map<number, unknown> };
      const kept = new Map(s.fires);
      collect(key, now);
      s.fires = kept;
    };
  }
}

/** (s1) Store whose history is oldest first. */
export class OldestFirstStore extends MemoryStore {
  override async history(job: string, query?: HistoryQuery): Promise<HistoryPage> {
    const page = await super.history(job, query);
    return { ...page, executions: page.executions.reverse() };
  }
}

/** (s2) Store that cuts error text at a fixed length, splitting surrogate pairs. */
export class SplitsErrorText extends MemoryStore {
  override async record(execution: Execution): Promise<void> {
    const error = execution.error === null ? null : execution.error.slice(0, 8191);
    await super.record({ ...execution, error });
  }
}

/**
 * (f) The old rule for `early`: refuses only fires more than the whole claim window ahead, while
 * declaring the default tolerance.
 */
export class EarlyOnlyBeyondWindow extends MemoryLock {
  constructor(options: MemoryLockOptions = {}) {
    super({ ...options, earlyToleranceMs: options.windowMs ?? 5 * 60_000 });
    this.capabilities.earlyToleranceMs = new MemoryLock().capabilities.earlyToleranceMs;
  }
}

/** (g) Answers claims without the backend's time. */
export class NoBackendTime extends MemoryLock {
  override async claim(request: ClaimRequest): Promise<ClaimResult> {
    const { backendTime: _dropped, ...answer } = await super.claim(request);
    return answer as ClaimResult;
  }
}

/**
 * (s3) Store whose `record()` upserts unconditionally, as every store did before: a late
 * `running` write replaces the finished row (the job's last outcome is left alone).
 */
export class ReopensFinished extends MemoryStore {
  private readonly reopened = new Map<string, Execution>();

  override async record(execution: Execution): Promise<void> {
    if (execution.status === 'running') this.reopened.set(execution.id, { ...execution });
    else this.reopened.delete(execution.id);
    await super.record(execution);
  }

  override async history(job: string, query?: HistoryQuery): Promise<HistoryPage> {
    const page = await super.history(job, query);
    return {
      ...page,
      executions: page.executions.map((e) => ({ ...(this.reopened.get(e.id) ?? e) })),
    };
  }
}
