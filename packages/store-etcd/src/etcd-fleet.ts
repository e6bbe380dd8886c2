import type { InstanceRecord, LiveInstance, RunRequest, RunRequestInput } from '@fleetcron/core';
import {
  assertInstanceRecord,
  INSTANCE_EXPIRY_HEARTBEATS,
  newRunRequest,
} from '@fleetcron/core/backend';
import { callEtcd, randomLeaseId } from '@fleetcron/etcd-shared';
import type { Etcd3, Watcher } from 'etcd3';
import { fromKeyPart, padTime, type StoreKeys } from './keys.js';
import type { ResolvedStoreOptions } from './options.js';

/** Smallest lease TTL the store asks for, s (etcd raises shorter ones to its own minimum). */
const MIN_TTL_SEC = 2;

/**
 * The registry and run requests of {@link EtcdStore}. etcd has no clock a client can read, so
 * liveness is judged by etcd itself: each heartbeat puts the record on a fresh etcd lease of
 * 3 × heartbeatMs (rounded up to whole seconds, at least 2 s) and revokes the previous one; the
 * server deletes the record when the lease runs out. `lastSeenAt` is the writer's clock.
 */
export class EtcdFleet {
  /** The lease each instance heartbeating through this store last used. */
  private readonly leases = new Map<string, number>();
  private readonly watchers = new Set<(job: string) => void>();
  private watcher: Promise<Watcher | null> | null = null;

  constructor(
    private readonly client: Etcd3,
    private readonly keys: StoreKeys,
    private readonly options: ResolvedStoreOptions,
  ) {}

  async heartbeat(instance: InstanceRecord): Promise<void> {
    assertInstanceRecord(instance);
    const ttl = Math.max(
      MIN_TTL_SEC,
      Math.ceil((INSTANCE_EXPIRY_HEARTBEATS * instance.heartbeatMs) / 1000),
    );
    const lease = randomLeaseId();
    const value = JSON.stringify({ ...instance, lastSeenAt: this.options.clock.now() });
    await this.call('heartbeat', (o) =>
      this.client.leaseClient.leaseGrant({ TTL: ttl, ID: lease }, o),
    );
    await this.call('heartbeat', (o) =>
      this.client
        .put(this.keys.instance(instance.instanceId))
        .value(value)
        .lease(lease)
        .options(o)
        .exec(),
    );
    const previous = this.leases.get(instance.instanceId);
    this.leases.set(instance.instanceId, lease);
    if (previous !== undefined) await this.revoke(previous);
  }

  async instances(): Promise<LiveInstance[]> {
    const values = await this.call('instances', (o) =>
      this.client.getAll().prefix(this.keys.allInstances()).options(o).strings(),
    );
    return Object.values(values)
      .map((v) => JSON.parse(v) as LiveInstance)
      .sort((a, b) => (a.instanceId < b.instanceId ? -1 : a.instanceId > b.instanceId ? 1 : 0));
  }

  async leave(instanceId: string): Promise<void> {
    await this.call('leave', (o) =>
      this.client.delete().key(this.keys.instance(instanceId)).options(o).exec(),
    );
    const lease = this.leases.get(instanceId);
    this.leases.delete(instanceId);
    if (lease !== undefined) await this.revoke(lease);
  }

  /** Puts the request under `r/<job>/<requestedAt>:<id>`; watchers hear of the put. */
  async requestRun(input: RunRequestInput): Promise<RunRequest> {
    const request = newRunRequest(input, this.options.clock.now());
    const key = `${this.keys.requests(request.job)}${padTime(request.requestedAt)}:${request.id}`;
    await this.call('requestRun', (o) =>
      this.client.put(key).value(JSON.stringify(request)).options(o).exec(),
    );
    return request;
  }

  /**
   * One transaction deletes every pending request of `jobs` with `prev_kv`: etcd serialises
   * transactions, so each request is returned by exactly one taker's delete.
   */
  async takeRunRequests(jobs: readonly string[]): Promise<RunRequest[]> {
    if (jobs.length === 0) return [];
    const prefixes = [...new Set(jobs)].map((job) => this.keys.requests(job));
    const response = await this.call('takeRunRequests', (o) =>
      this.client.kv.txn(
        {
          compare: [],
          success: prefixes.map((p) => ({
            request_delete_range: {
              key: Buffer.from(p),
              range_end: prefixEnd(Buffer.from(p)),
              prev_kv: true,
            },
          })),
          failure: [],
        },
        o,
      ),
    );
    const taken: { key: string; request: RunRequest }[] = [];
    for (const op of response.responses) {
      for (const kv of op.response_delete_range?.prev_kvs ?? []) {
        taken.push({ key: kv.key.toString(), request: JSON.parse(kv.value.toString()) });
      }
    }
    return taken
      .sort((a, b) => {
        const x = a.key.slice(a.key.lastIndexOf('/'));
        const y = b.key.slice(b.key.lastIndexOf('/'));
        return x < y ? -1 : x > y ? 1 : 0;
      })
      .map((t) => t.request);
  }

  /** Push capability: an etcd watch on the run-request prefix (made on first use). */
  watchRunRequests(listener: (job: string) => void): () => void {
    this.watchers.add(listener);
    this.watcher ??= this.watch();
    return () => {
      this.watchers.delete(listener);
      if (this.watchers.size === 0) this.stopWatching();
    };
  }

  /** Cancels the watch, if any. */
  close(): void {
    this.watchers.clear();
    this.stopWatching();
  }

  private watch(): Promise<Watcher | null> {
    const attempt: Promise<Watcher | null> = this.createWatch(() => attempt);
    return attempt;
  }

  private async createWatch(self: () => Promise<Watcher | null>): Promise<Watcher | null> {
    const requests = this.keys.allRequests();
    try {
      const watcher = await this.client.watch().prefix(requests).create();
      watcher.on('error', () => {}); // etcd3 reconnects the watch; instances also poll
      watcher.on('put', (kv) => {
        const rest = kv.key.toString().slice(requests.length);
        const job = fromKeyPart(rest.slice(0, rest.indexOf('/')));
        for (const listener of this.watchers) {
          try {
            listener(job);
          } catch {
            // a listener's failure is its own
          }
        }
      });
      return watcher;
    } catch {
      // Polling covers the gap; try again in a second while anyone listens.
      const retry = setTimeout(() => {
        if (this.watchers.size > 0 && this.watcher === self()) this.watcher = this.watch();
      }, 1000);
      retry.unref?.();
      return null;
    }
  }

  private stopWatching(): void {
    const watcher = this.watcher;
    this.watcher = null;
    void watcher?.then((w) => w?.cancel()).catch(() => undefined);
  }

  private async revoke(lease: number): Promise<void> {
    await this.call('heartbeat', (o) =>
      this.client.leaseClient.leaseRevoke({ ID: lease }, o),
    ).catch(
      () => undefined, // an expired lease is gone already; a failed revoke expires by itself
    );
  }

  private call<T>(operation: string, fn: (o: { deadline: Date }) => Promise<T>): Promise<T> {
    return callEtcd(operation, this.options.requestTimeoutMs, fn);
  }
}

/** The end of the key range holding every key that starts with `prefix`. */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i] = end[i]! + 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}
