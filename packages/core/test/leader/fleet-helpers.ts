import {
  BackendUnavailableError,
  type BatchOptions,
  type CampaignRequest,
  type CampaignResult,
  type ClaimRequest,
  type ClaimResult,
  type Elector,
  type Execution,
  every,
  FakeClock,
  type JobContext,
  type JobDefinition,
  type LeaderInfo,
  type Lease,
  type Lock,
  type LockInspection,
  MemoryElector,
  MemoryLock,
  MemoryStore,
  Scheduler,
  type SchedulerOptions,
} from '../../src/index.js';

/** A Lock that counts the claims each owner sends (single or batched) and can cut owners off. */
export class CountingLock implements Lock {
  /** `owner → key → claims sent`. */
  readonly sent = new Map<string, Map<string, number>>();
  /** Owners whose claims and releases never answer (a process that froze or died). */
  readonly dead = new Set<string>();
  constructor(private readonly inner: MemoryLock) {}
  get backend() {
    return this.inner.backend;
  }
  get capabilities() {
    return this.inner.capabilities;
  }
  get windowMs() {
    return this.inner.windowMs;
  }
  /** Claims `owner` sent, of keys for which `match(key)` holds. */
  claimsBy(owner: string, match: (key: string) => boolean = () => true): number {
    let n = 0;
    for (const [key, count] of this.sent.get(owner) ?? []) if (match(key)) n += count;
    return n;
  }
  private count(request: ClaimRequest): void {
    const byKey = this.sent.get(request.owner) ?? new Map<string, number>();
    byKey.set(request.key, (byKey.get(request.key) ?? 0) + 1);
    this.sent.set(request.owner, byKey);
  }
  async claim(request: ClaimRequest): Promise<ClaimResult> {
    this.count(request);
    if (this.dead.has(request.owner)) return new Promise<never>(() => {});
    return this.inner.claim(request);
  }
  async claimMany(
    requests: readonly ClaimRequest[],
    options?: BatchOptions,
  ): Promise<ClaimResult[]> {
    for (const r of requests) this.count(r);
    if (requests.some((r) => this.dead.has(r.owner))) return new Promise<never>(() => {});
    return this.inner.claimMany(requests, options);
  }
  async extend(lease: Lease, leaseMs: number): Promise<Lease | null> {
    if (this.dead.has(lease.owner)) return new Promise<never>(() => {});
    return this.inner.extend(lease, leaseMs);
  }
  async release(lease: Lease): Promise<boolean> {
    if (this.dead.has(lease.owner)) return new Promise<never>(() => {});
    return this.inner.release(lease);
  }
  withdraw(lease: Lease): Promise<boolean> {
    return this.inner.withdraw(lease);
  }
  inspect(key: string): Promise<LockInspection> {
    return this.inner.inspect(key);
  }
}

/** An Elector that fails every step of the candidates listed in `down` (a partitioned leader). */
export class FlakyElector implements Elector {
  readonly down = new Set<string>();
  constructor(private readonly inner: MemoryElector) {}
  get backend() {
    return this.inner.backend;
  }
  get capabilities() {
    return this.inner.capabilities;
  }
  private check(id: string, step: string): void {
    if (this.down.has(id)) throw new BackendUnavailableError('memory', step);
  }
  async campaign(request: CampaignRequest): Promise<CampaignResult> {
    this.check(request.id, 'campaign');
    return this.inner.campaign(request);
  }
  async renew(term: LeaderInfo, ttlMs: number): Promise<LeaderInfo | null> {
    this.check(term.id, 'renew');
    return this.inner.renew(term, ttlMs);
  }
  async resign(term: LeaderInfo): Promise<boolean> {
    this.check(term.id, 'resign');
    return this.inner.resign(term);
  }
  leader(election: string): Promise<LeaderInfo | null> {
    return this.inner.leader(election);
  }
}

/** One run as the job saw it. */
export interface SeenRun {
  instanceId: string;
  fireAt: number;
  shard: JobContext['shard'];
  startedAt: number;
}

/** A simulated fleet on one FakeClock: shared lock, elector and store. */
export function simulatedFleet() {
  const fake = new FakeClock();
  const lock = new CountingLock(new MemoryLock({ clock: fake }));
  const elector = new FlakyElector(new MemoryElector({ clock: fake }));
  const store = new MemoryStore({ clock: fake });
  const runs: SeenRun[] = [];
  const members: Scheduler[] = [];
  /** A scheduler of the fleet with one job (`job` fields over an every-second 1 ms job). */
  const member = (
    instanceId: string,
    job: Partial<JobDefinition> = {},
    options: Partial<SchedulerOptions> = {},
  ): Scheduler => {
    const scheduler = new Scheduler({
      ...{ lock, store, clock: fake, instanceId, heartbeatMs: 1_000 },
      ...options,
    });
    scheduler.add({
      name: 'tick',
      trigger: every(1000),
      run: async (ctx) => {
        runs.push({
          ...{ instanceId: ctx.instanceId, fireAt: ctx.fireAt.getTime(), shard: ctx.shard },
          startedAt: fake.now(),
        });
        await ctx.clock.sleep(1);
      },
      ...job,
    });
    members.push(scheduler);
    return scheduler;
  };
  /** Stops every member (moving the clock so their runs can finish). */
  const stopAll = async (list: Scheduler[] = members) => {
    const stopped = Promise.all(list.map((s) => s.stop({ drainMs: 2_000 })));
    await fake.advance(3_000);
    await stopped;
  };
  const history = async (job = 'tick'): Promise<Execution[]> =>
    (await store.history(job, { limit: 1000 })).executions;
  return { fake, lock, elector, store, runs, member, members, stopAll, history };
}

/** Fires of the every-second job in `[from, to]`. */
export function secondsBetween(from: number, to: number): number[] {
  const out: number[] = [];
  for (let t = Math.ceil(from / 1000) * 1000; t <= to; t += 1000) out.push(t);
  return out;
}
