import {
  BackendUnavailableError,
  type ClaimRequest,
  type ClaimResult,
  type Execution,
  type FakeClock,
  type FleetcronEvent,
  type HistoryPage,
  type HistoryQuery,
  type JobState,
  type Lease,
  type Lock,
  type LockInspection,
  type MemoryLock,
  type Scheduler,
  type Store,
  subscribe,
} from '../../src/index.js';

/** Lets every pending answer, batch flush and callback run, without firing any timer. */
export async function settle(fake: FakeClock, rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) await fake.flush();
}

/** Stops `scheduler`, moving the fake clock 1 s so its runs and claims can settle. */
export async function stopOnFakeClock(scheduler: Scheduler, fake: FakeClock): Promise<void> {
  const stopping = scheduler.stop();
  await fake.advance(1_000);
  await stopping;
}

/** Records every fleetcron event published while the test runs. */
export function recordEvents(): { events: FleetcronEvent[]; stop: () => void } {
  const events: FleetcronEvent[] = [];
  const stop = subscribe((e) => {
    events.push(e);
  });
  return { events, stop };
}

/** How a {@link FlakyLock} misbehaves. */
export type ExtendMode = 'ok' | 'null' | 'throw' | 'hang';

/**
 * Wraps a Lock and lets a test break it: claims can throw BackendUnavailableError (`down`),
 * extends can answer null, throw or hang. Owners listed in `onlyOwners` are affected, or all.
 */
export class FlakyLock implements Lock {
  down = false;
  /** Claims and releases never answer (a partition without client timeouts). */
  hang = false;
  extendMode: ExtendMode = 'ok';
  onlyOwners: Set<string> | null = null;
  claims = 0;
  extends = 0;
  constructor(private readonly inner: Lock) {}
  get backend() {
    return this.inner.backend;
  }
  get capabilities() {
    return this.inner.capabilities;
  }
  get windowMs() {
    return this.inner.windowMs;
  }
  private affects(owner: string): boolean {
    return this.onlyOwners === null || this.onlyOwners.has(owner);
  }
  async claim(request: ClaimRequest): Promise<ClaimResult> {
    this.claims++;
    if (this.hang && this.affects(request.owner)) return new Promise<never>(() => {});
    if (this.down && this.affects(request.owner)) {
      throw new BackendUnavailableError(this.backend, 'claim', new Error('connection refused'));
    }
    return this.inner.claim(request);
  }
  async extend(lease: Lease, leaseMs: number): Promise<Lease | null> {
    this.extends++;
    if (this.affects(lease.owner)) {
      if (this.extendMode === 'null') return null;
      if (this.extendMode === 'throw') {
        throw new BackendUnavailableError(this.backend, 'extend', new Error('timeout'));
      }
      if (this.extendMode === 'hang') return new Promise<never>(() => {});
    }
    return this.inner.extend(lease, leaseMs);
  }
  async release(lease: Lease): Promise<boolean> {
    if (this.hang && this.affects(lease.owner)) return new Promise<never>(() => {});
    if (this.down && this.affects(lease.owner)) {
      throw new BackendUnavailableError(this.backend, 'release');
    }
    return this.inner.release(lease);
  }
  inspect(key: string): Promise<LockInspection> {
    return this.inner.inspect(key);
  }
}

/** A Store whose every call fails (or that wraps another store and fails on demand). */
export class BrokenStore implements Store {
  readonly backend = 'broken';
  failing = true;
  constructor(private readonly inner: Store | null = null) {}
  private check(op: string): Store {
    if (this.failing || !this.inner) throw new BackendUnavailableError('broken', op);
    return this.inner;
  }
  async record(execution: Execution): Promise<void> {
    await this.check('record').record(execution);
  }
  async history(job: string, query?: HistoryQuery): Promise<HistoryPage> {
    return this.check('history').history(job, query);
  }
  async prune(before: number): Promise<number> {
    return this.check('prune').prune(before);
  }
  async getJobState(job: string): Promise<JobState> {
    return this.check('getJobState').getJobState(job);
  }
  async setPaused(job: string, paused: boolean): Promise<void> {
    await this.check('setPaused').setPaused(job, paused);
  }
}

/** Every execution of `job` in a store (all pages). */
export async function allHistory(store: Store, job: string): Promise<Execution[]> {
  const out: Execution[] = [];
  let cursor: string | null = null;
  do {
    const page: HistoryPage = await store.history(job, { limit: 1000, cursor });
    out.push(...page.executions);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/** Every multiple of `periodMs` in `[from, to]`. */
export function firesBetween(periodMs: number, from: number, to: number): number[] {
  const out: number[] = [];
  for (let t = Math.ceil(from / periodMs) * periodMs; t <= to; t += periodMs) out.push(t);
  return out;
}

/** A promise a test opens by hand. */
export class Gate {
  private opens: Array<() => void> = [];
  /** How many callers are waiting. */
  get waiting(): number {
    return this.opens.length;
  }
  wait(): Promise<void> {
    return new Promise((resolve) => this.opens.push(resolve));
  }
  /** Lets every waiting caller through. */
  open(): void {
    for (const open of this.opens.splice(0)) open();
  }
}

/**
 * Wraps a Lock so that the ANSWERS of claims and extends can be held back: the backend has done
 * the work, the reply is in flight (or the process is frozen before it reads it). Withdraw is
 * passed through, or hidden with `withdrawable: false`. Records each claim's AbortSignal.
 */
export class HeldAnswerLock implements Lock {
  holdClaims = false;
  holdExtends = false;
  readonly claimGate = new Gate();
  readonly extendGate = new Gate();
  readonly signals: AbortSignal[] = [];
  withdrawn = 0;
  readonly withdraw?: (lease: Lease) => Promise<boolean>;
  constructor(
    private readonly inner: Lock,
    withdrawable = true,
  ) {
    if (withdrawable && inner.withdraw) {
      this.withdraw = async (lease) => {
        this.withdrawn++;
        return (await inner.withdraw?.(lease)) ?? false;
      };
    }
  }
  get backend() {
    return this.inner.backend;
  }
  get capabilities() {
    return this.inner.capabilities;
  }
  get windowMs() {
    return this.inner.windowMs;
  }
  async claim(request: ClaimRequest): Promise<ClaimResult> {
    if (request.signal) this.signals.push(request.signal);
    const result = await this.inner.claim(request);
    if (this.holdClaims) await this.claimGate.wait();
    return result;
  }
  extendsSent = 0;
  async extend(lease: Lease, leaseMs: number): Promise<Lease | null> {
    this.extendsSent++;
    const result = await this.inner.extend(lease, leaseMs);
    if (this.holdExtends) await this.extendGate.wait();
    return result;
  }
  release(lease: Lease): Promise<boolean> {
    return this.inner.release(lease);
  }
  inspect(key: string): Promise<LockInspection> {
    return this.inner.inspect(key);
  }
}

/** Wraps a Store so that the paused check or the `running` write can be held back. */
export class HeldAnswerStore implements Store {
  readonly backend = 'held';
  holdJobState = false;
  holdRunning = false;
  readonly gate = new Gate();
  jobStateReads = 0;
  readonly recorded: Execution[] = [];
  constructor(readonly inner: Store) {}
  async record(execution: Execution): Promise<void> {
    this.recorded.push({ ...execution });
    await this.inner.record(execution);
    if (this.holdRunning && execution.status === 'running') await this.gate.wait();
  }
  history(job: string, query?: HistoryQuery): Promise<HistoryPage> {
    return this.inner.history(job, query);
  }
  prune(before: number): Promise<number> {
    return this.inner.prune(before);
  }
  async getJobState(job: string): Promise<JobState> {
    this.jobStateReads++;
    const state = await this.inner.getJobState(job);
    if (this.holdJobState) await this.gate.wait();
    return state;
  }
  setPaused(job: string, paused: boolean): Promise<void> {
    return this.inner.setPaused(job, paused);
  }
}

/**
 * `lock` without `readMarks`, as a third-party lock may be: the scheduler reads catch-up marks
 * with `inspect` and learns the fleet's clock only from its first claim's answer.
 */
export function withoutMarkReads<L extends MemoryLock>(lock: L): L {
  Object.defineProperty(lock, 'readMarks', { value: undefined });
  return lock;
}
