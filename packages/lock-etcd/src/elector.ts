import {
  BackendUnavailableError,
  type CampaignRequest,
  type CampaignResult,
  type Clock,
  type Elector,
  type ElectorCapabilities,
  type LeaderInfo,
  realClock,
} from '@fleetcron/core';
import { assertCampaign, assertNonEmptyString, assertPositiveMs } from '@fleetcron/core/backend';
import { singleAttemptClientOf } from '@fleetcron/etcd-shared';
import type { Etcd3, IKeyValue } from 'etcd3';
import {
  absent,
  BACKEND,
  deleteOp,
  EtcdRpc,
  getOp,
  kvsOf,
  modifiedAt,
  parseValue,
  putOp,
} from './rpc.js';

/** Options of {@link EtcdElector}. */
export interface EtcdElectorOptions {
  /** Prefix of every key the elector writes (`{prefix}e/{election}`). Default `fleetcron/`. */
  prefix?: string;
  /** Deadline of every etcd request, ms; past it the step throws `BackendUnavailableError`. Default 5000. */
  requestTimeoutMs?: number;
  /** Clock for the informational `expiresAt` of leaders (etcd's TTLs judge expiry). Default: real. */
  clock?: Clock;
}

/** What {@link EtcdElector} declares: whole-second TTLs of at least 2 s, judged by etcd. */
export const ETCD_ELECTOR_CAPABILITIES: Readonly<ElectorCapabilities> = Object.freeze({
  minTtlMs: 2_000,
  ttlGranularityMs: 1_000,
  durable: true,
  clock: 'backend',
});

/** Value of an election key. */
interface ElectionValue {
  id: string;
  /** The etcd lease the key is attached to (decimal). */
  lease: string;
  ttlMs: number;
}

/**
 * An {@link Elector} on etcd v3. An election is one key, `{prefix}e/{election}`, attached to an
 * etcd lease of the term's TTL; the **term is the key's mod revision** (etcd's cluster-wide
 * revision: strictly increasing and persisted, so terms increase across leaders and restarts).
 *
 * - campaign: read the key; a live key of another id makes a follower. Otherwise grant a lease
 *   and put the key in a transaction guarded by what was read (absent, or the same mod
 *   revision); the transaction's revision is the new term.
 * - renew: keep the term's lease alive, THEN check that the key still has the term's revision
 *   (so a renewal can never extend a replaced term).
 * - resign: delete the key if it still has the term's revision (another candidate can win at
 *   once), then revoke the lease.
 *
 * Expiry is judged by etcd's lease TTLs; `expiresAt` of a leader read from etcd is an upper
 * bound (read time + TTL). Never closes your client: steps go through a client of its own built
 * from the same options without etcd3's retries (see `singleAttemptClientOf` in `@fleetcron/etcd-shared`), closed by `close()`.
 */
export class EtcdElector implements Elector {
  readonly backend = BACKEND;
  readonly capabilities: ElectorCapabilities = { ...ETCD_ELECTOR_CAPABILITIES };
  private readonly prefix: string;
  private readonly clock: Clock;
  private readonly client: Etcd3;
  private readonly rpc: EtcdRpc;
  /** Leases this elector granted, by term. */
  private readonly leases = new Map<number, string>();

  constructor(client: Etcd3, options: EtcdElectorOptions = {}) {
    this.prefix = options.prefix ?? 'fleetcron/';
    assertNonEmptyString('prefix', this.prefix);
    const requestTimeoutMs = options.requestTimeoutMs ?? 5_000;
    assertPositiveMs('requestTimeoutMs', requestTimeoutMs);
    this.clock = options.clock ?? realClock;
    this.client = singleAttemptClientOf(client);
    this.rpc = new EtcdRpc(this.client, requestTimeoutMs);
  }

  async campaign(request: CampaignRequest): Promise<CampaignResult> {
    assertCampaign(request, this.capabilities, this.backend);
    const { election, id, ttlMs, signal } = request;
    const key = this.keyOf(election);
    const seen = await this.read(key, signal);
    const value = seen && parseValue<ElectionValue>(seen);
    if (seen && value && value.id !== id) return this.follower(election, seen, value);
    if (signal?.aborted) {
      throw BackendUnavailableError.notSent(BACKEND, 'campaign');
    }
    const lease = await this.rpc.grant('campaign', Math.ceil(ttlMs / 1000));
    let res: Awaited<ReturnType<EtcdRpc['txn']>>;
    try {
      res = await this.rpc.txn(
        'campaign',
        [seen ? modifiedAt(key, seen.mod_revision) : absent(key)],
        [putOp(key, { id, lease, ttlMs } satisfies ElectionValue, lease)],
        [getOp(key)],
        signal,
      );
    } catch (error) {
      this.revoke(lease);
      throw error;
    }
    if (!res.succeeded) {
      this.revoke(lease);
      const current = kvsOf(res, 0)[0];
      const currentValue = current && parseValue<ElectionValue>(current);
      if (current && currentValue) return this.follower(election, current, currentValue);
      const now = this.clock.now(); // changed and gone meanwhile: try again right away
      return { status: 'follower', leader: { election, id: '', term: 0, expiresAt: now }, now };
    }
    if (value) this.revoke(value.lease); // this id's previous term: its key moved to the new lease
    const term = Number(res.header.revision);
    this.leases.set(term, lease);
    return {
      status: 'elected',
      leader: { election, id, term, expiresAt: this.clock.now() + ttlMs },
    };
  }

  async renew(term: LeaderInfo, ttlMs: number): Promise<LeaderInfo | null> {
    const key = this.keyOf(term.election);
    let lease = this.leases.get(term.term);
    if (lease === undefined) {
      const seen = await this.read(key);
      if (!seen || Number(seen.mod_revision) !== term.term) return null;
      lease = parseValue<ElectionValue>(seen)?.lease;
      if (lease === undefined) return null;
    }
    const ttls = await this.rpc.keepAlive('renew', [lease]);
    const ttlSec = ttls.get(lease) ?? 0;
    if (!(ttlSec > 0)) {
      this.leases.delete(term.term);
      return null;
    }
    // kept alive first, checked second: if the key still has the term's revision now, the
    // keepalive extended the live term (a replaced key never gets its old revision back)
    const now = await this.read(key);
    const value = now && parseValue<ElectionValue>(now);
    if (!now || Number(now.mod_revision) !== term.term || value?.id !== term.id) {
      this.leases.delete(term.term);
      return null;
    }
    return { ...term, expiresAt: this.clock.now() + Math.min(ttlMs, ttlSec * 1000) };
  }

  async resign(term: LeaderInfo): Promise<boolean> {
    const key = this.keyOf(term.election);
    const res = await this.rpc.txn('resign', [modifiedAt(key, term.term)], [deleteOp(key)], []);
    const lease = this.leases.get(term.term);
    this.leases.delete(term.term);
    if (lease !== undefined) this.revoke(lease);
    return res.succeeded;
  }

  async leader(election: string): Promise<LeaderInfo | null> {
    const seen = await this.read(this.keyOf(election));
    const value = seen && parseValue<ElectionValue>(seen);
    if (!seen || !value) return null;
    return this.follower(election, seen, value).leader;
  }

  /** Closes the elector's own client; leases of live terms expire by their TTL. */
  async close(): Promise<void> {
    this.leases.clear();
    this.client.close();
  }

  private keyOf(election: string): Buffer {
    return Buffer.from(`${this.prefix}e/${encodeURIComponent(election)}`);
  }

  private async read(key: Buffer, signal?: AbortSignal): Promise<IKeyValue | undefined> {
    const res = await this.rpc.txn('read', [], [getOp(key)], [], signal);
    return kvsOf(res, 0)[0];
  }

  private follower(election: string, kv: IKeyValue, value: ElectionValue) {
    const now = this.clock.now();
    const leader: LeaderInfo = {
      election,
      id: value.id,
      term: Number(kv.mod_revision),
      expiresAt: now + value.ttlMs,
    };
    return { status: 'follower' as const, leader, now };
  }

  /** Revokes a lease in the background; a failure only delays its expiry. */
  private revoke(lease: string): void {
    this.rpc.revoke('revoke', lease).catch(() => {});
  }
}
