import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import {
  type FailoverCase,
  type FailoverTopology,
  runFailoverConformance,
} from '@fleetcron/conformance';
import { type ClaimRequest, type FleetcronEvent, subscribe } from '@fleetcron/core';
import { type StallLink, startRedisSentinel, waitFor } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { RedisLock, type ReplicaAckOptions } from '../../src/index.js';
import { replicateThroughLink } from './replicate-through-link.js';

// Failover of Redis under Sentinel (#31): real schedulers claim 5 jobs every second on 3
// instances, each on an ioredis Sentinel client of its own; the primary is SIGKILLed and the
// Sentinels promote the replica. Judged from the ledger of runs. Replication is asynchronous, so
// duplicates are measured, not asserted (README, "Redis Cluster and Sentinel"); tokens must still
// increase per job and claims must come back.
//
// FLEETCRON_FAILOVER=1 adds the replicaAck measurements (docs/performance/failover.md): the same
// kill with and without replicaAck, the killed primary restarted (empty) as a replica of the
// promoted one; and a lagging replica (its replication stream stalled for `lagMs` before the kill, the
// stalled bytes dropped with the primary), after which a late claimer asks the promoted primary
// for every fire a scheduler won shortly before the kill: each one it wins again is a fire
// granted twice (the gap replicaAck closes). With replicaAck, a second grant fails the case.

interface RedisFailoverOptions {
  /** The locks' `replicaAck` option. */
  replicaAck?: ReplicaAckOptions;
  /** Restart the killed primary (empty) as a replica of the promoted one once it is promoted. */
  restartAfterPromotion?: boolean;
  /** Stall the replication stream this long before the kill (the replica falls behind). */
  lagMs?: number;
  /**
   * `repl-diskless-sync-delay` of both data nodes, in whole seconds (Redis default 5: a primary
   * waits that long for more replicas before it starts a full sync).
   */
  syncDelaySeconds?: number;
  /** Name of the case, for the report line of the late claimer. */
  title?: string;
}

/** The late claimer's figures of one run (see the file comment). */
interface GapFigures {
  /** Fires schedulers won from 2 s before the stall until the kill, claimed again late. */
  reclaimed: number;
  /** Of those, fires the promoted primary granted again: each would run twice. */
  grantedTwice: number;
  /** Claims that failed closed (claim.failed) while the replica lagged. */
  failedClosedDuringLag: number;
}

async function topology(options: RedisFailoverOptions = {}): Promise<FailoverTopology> {
  const lagMs = options.lagMs ?? 0;
  // failover-timeout also delays Sentinel's fix of a replica that replicates from another address
  // (the stall link): far beyond the run
  const ha = await startRedisSentinel(lagMs > 0 ? { failoverTimeoutMs: 60_000 } : {});
  const prefix = `failover-${randomUUID()}`;
  const clients: Redis[] = [];
  const newClient = () => {
    const client = new Redis({ sentinels: [...ha.sentinels], name: ha.name });
    client.on('error', () => {});
    clients.push(client);
    return client;
  };
  if (options.syncDelaySeconds !== undefined) {
    for (const node of ha.nodes) {
      const admin = new Redis(node);
      admin.on('error', () => {});
      clients.push(admin);
      await admin.config('SET', 'repl-diskless-sync-delay', String(options.syncDelaySeconds));
    }
  }
  let link: StallLink | undefined;
  if (lagMs > 0) link = await replicateThroughLink(ha.nodes, clients);
  const won = new Map<string, number>(); // job@fireAt -> when the claim was answered won
  const failedAt: number[] = [];
  const unsubscribe = subscribe((event: FleetcronEvent) => {
    if (!event.instanceId.startsWith('failover-')) return;
    if (event.type === 'claim.won') won.set(`${event.job}@${event.fireAt}`, event.at);
    if (event.type === 'claim.failed') failedAt.push(event.at);
  });
  let killed: 0 | 1 | undefined;
  let gap: GapFigures | undefined;
  return {
    async newLock() {
      return new RedisLock(newClient(), { prefix, replicaAck: options.replicaAck });
    },
    async fail() {
      const primary = await ha.primary();
      killed = primary;
      let stalledAt = Date.now();
      if (link) {
        link.stall();
        stalledAt = Date.now();
        // the fault's length (the replica behind), not a wait for a condition
        await new Promise((resolve) => setTimeout(resolve, lagMs));
      }
      await ha.kill(primary);
      const killedAt = Date.now();
      await link?.close(); // the bytes it held back never reach the replica
      if (options.restartAfterPromotion || link) {
        await waitFor(async () => (await ha.primary()) !== primary, {
          timeoutMs: 30_000,
          message: 'the Sentinels promoting the replica',
        });
      }
      if (options.restartAfterPromotion) {
        // empty (no persistence), and made a replica of the promoted primary at once, as an
        // operator would (the Sentinels' own +convert-to-slave comes about 8 s later)
        await ha.start(primary);
        killed = undefined;
        const restarted = new Redis(ha.nodes[primary]);
        restarted.on('error', () => {});
        clients.push(restarted);
        const promoted = ha.nodes[primary === 0 ? 1 : 0];
        await restarted.call('REPLICAOF', promoted.host, String(promoted.port));
      }
      if (link) {
        gap = await claimLate(newClient(), prefix, won, stalledAt - 2_000, killedAt);
        gap.failedClosedDuringLag = failedAt.filter((t) => t >= stalledAt && t < killedAt).length;
        if (options.replicaAck && gap.grantedTwice > 0) {
          throw new Error(
            `replicaAck: ${gap.grantedTwice} of ${gap.reclaimed} fires won before the kill were granted again by the promoted primary`,
          );
        }
      }
    },
    async heal() {
      if (killed !== undefined) await ha.start(killed);
      killed = undefined;
    },
    async close() {
      unsubscribe();
      if (gap) report(options.title ?? 'lagging replica', gap);
      for (const client of clients) client.disconnect();
      await link?.close();
      await ha.close();
    },
  };
}

/**
 * Asks the promoted primary (through a fresh Sentinel client, owner `late-claimer`) for every fire
 * the schedulers won between `from` and `until`; answers how many it granted again. Per-fire
 * leases of 1 ms, so the fleet's exclusive claims are never held back by them.
 */
async function claimLate(
  client: Redis,
  prefix: string,
  won: ReadonlyMap<string, number>,
  from: number,
  until: number,
): Promise<GapFigures> {
  const lock = new RedisLock(client, { prefix });
  const requests: ClaimRequest[] = [];
  for (const [id, at] of won) {
    if (at < from || at > until) continue;
    const [key, fireAt] = id.split('@') as [string, string];
    requests.push({
      key,
      fireAt: Number(fireAt),
      owner: 'late-claimer',
      leaseMs: 1,
      exclusive: false,
    });
  }
  const results = await waitFor(() => lock.claimMany(requests), {
    timeoutMs: 30_000,
    message: 'the late claims answered by the promoted primary',
  });
  const grantedTwice = results.filter((result) => result.status === 'won').length;
  return { reclaimed: requests.length, grantedTwice, failedClosedDuringLag: 0 };
}

function report(title: string, gap: GapFigures): void {
  const line = `redis late claimer: ${title}: ${gap.grantedTwice} of ${gap.reclaimed} fires won before the kill granted again; ${gap.failedClosedDuringLag} claims failed closed while the replica lagged`;
  console.log(line);
  const file = process.env.FLEETCRON_FAILOVER_REPORT;
  if (file) {
    const record = { backend: 'redis late claimer', case: title, at: new Date().toISOString() };
    appendFileSync(file, `${JSON.stringify({ ...record, ...gap })}\n`);
  }
}

const ACK: ReplicaAckOptions = { replicas: 1, timeoutMs: 250 };
const LAG_MS = 1_500;
const long = process.env.FLEETCRON_FAILOVER === '1';

const measured = (title: string, options: RedisFailoverOptions): FailoverCase => ({
  title,
  topology: () => topology({ ...options, title }),
  duplicates: 'measure',
  run: { afterMs: 15_000 },
});

runFailoverConformance({
  name: 'redis (Sentinel: primary, replica, 3 Sentinels)',
  cases: [
    {
      title: 'primary SIGKILLed, replica promoted by the Sentinels',
      topology: () => topology(),
      duplicates: 'measure',
      run: { afterMs: 10_000 },
    },
    ...(long
      ? [
          measured('primary SIGKILLed, restarted once the replica is promoted', {
            restartAfterPromotion: true,
          }),
          measured('primary SIGKILLed, restarted once the replica is promoted, replicaAck', {
            restartAfterPromotion: true,
            replicaAck: ACK,
          }),
          measured(
            'primary SIGKILLed, restarted once the replica is promoted, replicaAck, repl-diskless-sync-delay 0',
            { restartAfterPromotion: true, replicaAck: ACK, syncDelaySeconds: 0 },
          ),
          measured('replica lagging 1.5 s, then primary SIGKILLed and restarted', {
            restartAfterPromotion: true,
            lagMs: LAG_MS,
          }),
          measured('replica lagging 1.5 s, then primary SIGKILLed and restarted, replicaAck', {
            restartAfterPromotion: true,
            lagMs: LAG_MS,
            replicaAck: ACK,
          }),
        ]
      : []),
  ],
});
