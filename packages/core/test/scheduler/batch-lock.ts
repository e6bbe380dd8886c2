import type {
  BatchOptions,
  ClaimRequest,
  ClaimResult,
  Lease,
  Lock,
  LockInspection,
  MemoryLock,
} from '../../src/index.js';
import { Gate } from './helpers.js';

/**
 * Wraps a MemoryLock and records its batched calls: every `claimMany` (its requests and
 * signal), `extendMany` and `releaseMany`, and any single `claim`/`extend`/`release`. Answers of
 * `claimMany` can be held back after the backend applied them (`holdClaims`), and a key's next
 * claim refused `early` (`refuseEarly`).
 */
export class BatchLock implements Lock {
  readonly claimBatches: { requests: ClaimRequest[]; signal: AbortSignal | undefined }[] = [];
  readonly extendBatches: Lease[][] = [];
  readonly releaseBatches: Lease[][] = [];
  singleClaims = 0;
  singleExtends = 0;
  singleReleases = 0;
  withdrawn = 0;
  holdClaims = false;
  readonly claimGate = new Gate();
  /** Throws this from `claimMany` when set. */
  failClaims: Error | null = null;
  /** Keys whose next claim is refused `early` (with the backend's time) without being applied. */
  readonly refuseEarly = new Set<string>();
  constructor(readonly inner: MemoryLock) {}
  get backend() {
    return this.inner.backend;
  }
  get capabilities() {
    return this.inner.capabilities;
  }
  get windowMs() {
    return this.inner.windowMs;
  }
  async claimMany(requests: readonly ClaimRequest[], options?: BatchOptions) {
    this.claimBatches.push({ requests: [...requests], signal: options?.signal });
    if (this.failClaims) throw this.failClaims;
    const refused = requests.map((r) => this.refuseEarly.delete(r.key));
    const applied = await this.inner.claimMany(requests.filter((_, i) => !refused[i]));
    const results = requests.map((r, i): ClaimResult => {
      if (!refused[i]) return applied.shift() as ClaimResult;
      return { status: 'lost', key: r.key, fireAt: r.fireAt, reason: 'early' };
    });
    if (this.holdClaims) await this.claimGate.wait();
    return results;
  }
  async extendMany(leases: readonly Lease[], leaseMs: readonly number[]) {
    this.extendBatches.push([...leases]);
    return this.inner.extendMany(leases, leaseMs);
  }
  async releaseMany(leases: readonly Lease[]) {
    this.releaseBatches.push([...leases]);
    return this.inner.releaseMany(leases);
  }
  claim(request: ClaimRequest): Promise<ClaimResult> {
    this.singleClaims++;
    return this.inner.claim(request);
  }
  extend(lease: Lease, leaseMs: number): Promise<Lease | null> {
    this.singleExtends++;
    return this.inner.extend(lease, leaseMs);
  }
  release(lease: Lease): Promise<boolean> {
    this.singleReleases++;
    return this.inner.release(lease);
  }
  async withdraw(lease: Lease): Promise<boolean> {
    this.withdrawn++;
    return this.inner.withdraw(lease);
  }
  inspect(key: string): Promise<LockInspection> {
    return this.inner.inspect(key);
  }
  /** Requests sent in all `claimMany` calls. */
  get claimedInBatches(): number {
    return this.claimBatches.reduce((n, b) => n + b.requests.length, 0);
  }
}
