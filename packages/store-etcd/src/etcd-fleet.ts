import type { InstanceRecord, JobState, LiveInstance } from '@fleetcron/core';
import {
  assertInstanceRecord,
  INSTANCE_EXPIRY_HEARTBEATS,
  newJobState,
} from '@fleetcron/core/backend';
import { callEtcd, randomLeaseId } from '@fleetcron/etcd-shared';
import type { Etcd3 } from 'etcd3';
import { fromKeyPart, type StoreKeys } from './keys.js';
import type { ResolvedStoreOptions } from './options.js';

/** Smallest lease TTL the store asks for, s (etcd raises shorter ones to its own minimum). */
const MIN_TTL_SEC = 2;

/**
 * The registry and job list of {@link EtcdStore} (its run requests: `EtcdRunRequests`). etcd
 * has no clock a client can read, so liveness is judged by etcd itself: each heartbeat puts the
 * record on a fresh etcd lease of 3 × heartbeatMs (rounded up to whole seconds, at least 2 s)
 * and revokes the previous one; the server deletes the record when the lease runs out.
 * `lastSeenAt` is the writer's clock.
 */
export class EtcdFleet {
  /** The lease each instance heartbeating through this store last used. */
  private readonly leases = new Map<string, number>();

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

  /** Jobs with a pause state or an outcome, by name (one transaction reads both prefixes). */
  async listJobs(): Promise<JobState[]> {
    const prefixes = [this.keys.allOf('p'), this.keys.allOf('o')];
    const response = await this.call('listJobs', (o) =>
      this.client.kv.txn(
        {
          compare: [],
          success: prefixes.map((p) => ({
            request_range: { key: Buffer.from(p), range_end: prefixEnd(Buffer.from(p)) },
          })),
          failure: [],
        },
        o,
      ),
    );
    const jobs = new Map<string, JobState>();
    response.responses.forEach((r, i) => {
      for (const kv of r.response_range?.kvs ?? []) {
        const job = fromKeyPart(kv.key.toString().slice(prefixes[i]!.length));
        jobs.set(job, {
          ...(jobs.get(job) ?? newJobState(job)),
          ...JSON.parse(kv.value.toString()),
        });
      }
    });
    return [...jobs.values()].sort((a, b) => (a.job < b.job ? -1 : a.job > b.job ? 1 : 0));
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
