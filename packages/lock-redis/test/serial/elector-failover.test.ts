import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { Candidate, type CandidateEvent } from '@fleetcron/core';
import { startRedisSentinel, waitFor } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisElector, type ReplicaAckOptions } from '../../src/index.js';
import { replicateThroughLink } from './replicate-through-link.js';

// The elector's side of the lagging-replica failover (#31, docs/performance/failover.md): the
// replica replicates through a StallLink, the link is stalled, candidate A campaigns while the
// replica lags, the primary is SIGKILLed (the stalled bytes dropped), the Sentinels promote the
// replica, and candidate B campaigns on the promoted primary. Measured: how long A and B both
// held leadership by their own view (two leaders at once), with and without replicaAck. A
// measurement (about 25 s a run), so opt-in: FLEETCRON_FAILOVER=1, as the lock's long cases in
// failover.test.ts; FLEETCRON_FAILOVER_REPORT appends one JSON line per run.

const long = process.env.FLEETCRON_FAILOVER === '1';
const RUNS = Number(process.env.FLEETCRON_FAILOVER_RUNS ?? 3);
const ACK: ReplicaAckOptions = { replicas: 1, timeoutMs: 250 };
const TTL_MS = 6_000;
/** How long the replica lags before the kill (the fault's length). */
const LAG_MS = 1_500;
/** How long both candidates are watched after the kill. */
const WATCH_MS = 15_000;

/** One run's figures. */
interface ElectorGapFigures {
  /** A was elected while the replica lagged (its win answered before the kill). */
  electedDuringLag: boolean;
  /** Time both A and B held leadership by their own view, ms (0: never two leaders). */
  overlapMs: number;
  /** How A's leadership ended, when it had one. */
  aLost: string | null;
  /** From the kill until someone leads, ms (`null`: nobody within the watch). */
  leaderBackMs: number | null;
  /** The last error A and B reported (a campaign or renewal that failed), for the record. */
  lastErrors: string[];
  /** The promoted primary's `INFO replication` lines about replicas, when nobody led again. */
  promotedReplicas?: string;
}

/** Leadership intervals of one candidate, by Date.now(), from its events. */
function watch(candidate: Candidate, log: CandidateEvent[]): [number, number][] {
  const intervals: [number, number][] = [];
  candidate.onChange((event) => {
    log.push(event);
    if (event.type === 'elected') intervals.push([Date.now(), Number.POSITIVE_INFINITY]);
    if (event.type === 'lost') {
      const open = intervals.at(-1);
      if (open) open[1] = Date.now();
    }
  });
  return intervals;
}

function overlap(a: [number, number][], b: [number, number][], until: number): number {
  let total = 0;
  for (const [a0, a1] of a) {
    for (const [b0, b1] of b) {
      total += Math.max(0, Math.min(a1, b1, until) - Math.max(a0, b0));
    }
  }
  return total;
}

async function runOnce(replicaAck: ReplicaAckOptions | undefined): Promise<ElectorGapFigures> {
  const ha = await startRedisSentinel({ failoverTimeoutMs: 60_000 });
  const clients: Redis[] = [];
  const candidates: Candidate[] = [];
  const admin = (node: { host: string; port: number }) => {
    const client = new Redis(node);
    client.on('error', () => {});
    clients.push(client);
    return client;
  };
  const sentinelClient = () => {
    const client = new Redis({ sentinels: [...ha.sentinels], name: ha.name });
    client.on('error', () => {});
    clients.push(client);
    return client;
  };
  try {
    for (const node of ha.nodes) await admin(node).config('SET', 'repl-diskless-sync-delay', '0');
    const link = await replicateThroughLink(ha.nodes, clients);
    const prefix = `elector-failover-${randomUUID()}`;
    const candidate = (id: string) => {
      const elector = new RedisElector(sentinelClient(), { prefix, replicaAck });
      const made = new Candidate({ elector, election: 'e', id, ttlMs: TTL_MS });
      candidates.push(made);
      return made;
    };
    const primary = await ha.primary();

    link.stall();
    const stalledAt = Date.now();
    const a = candidate('a');
    const aLog: CandidateEvent[] = [];
    const aHeld = watch(a, aLog);
    a.start();
    // the fault's length (the replica behind), not a wait for a condition
    await new Promise((resolve) => setTimeout(resolve, LAG_MS - (Date.now() - stalledAt)));
    const electedDuringLag = aHeld.length > 0;

    await ha.kill(primary);
    const killedAt = Date.now();
    await link.close(); // the bytes it held back never reach the replica
    const b = candidate('b');
    const bLog: CandidateEvent[] = [];
    const bHeld = watch(b, bLog);
    b.start();
    await waitFor(async () => (await ha.primary()) !== primary, {
      timeoutMs: 30_000,
      message: 'the Sentinels promoting the replica',
    });
    // the killed primary back (empty) as a replica of the promoted one, as in failover.test.ts:
    // with replicaAck nobody can be elected without a replica
    await ha.start(primary);
    const promoted = ha.nodes[primary === 0 ? 1 : 0];
    await admin(ha.nodes[primary]).call('REPLICAOF', promoted.host, String(promoted.port));
    // the observation window of a measurement, not a wait for a condition
    await new Promise((resolve) => setTimeout(resolve, WATCH_MS - (Date.now() - killedAt)));

    const until = Date.now();
    const starts = [...aHeld, ...bHeld].map(([start]) => start).filter((t) => t >= killedAt);
    const aLost = aLog.find((event) => event.type === 'lost');
    const promotedReplicas =
      starts.length > 0
        ? undefined
        : String(await admin(promoted).info('replication'))
            .split('\r\n')
            .filter((line) => /^(connected_slaves|slave\d|master_repl_offset)/.test(line))
            .join(' ') +
          ' | restarted node: ' +
          String(await admin(ha.nodes[primary]).info('replication'))
            .split('\r\n')
            .filter((line) => /^(role|master_host|master_port|master_link_status)/.test(line))
            .join(' ') +
          ` | promoted port ${promoted.port}`;
    return {
      promotedReplicas,
      electedDuringLag,
      overlapMs: overlap(aHeld, bHeld, until),
      aLost: aLost?.type === 'lost' ? aLost.reason : aHeld.length > 0 ? 'still leading' : null,
      leaderBackMs: starts.length > 0 ? Math.min(...starts) - killedAt : null,
      lastErrors: [aLog, bLog].map((log) => {
        const last = log.filter((event) => event.type === 'error').at(-1);
        return last?.type === 'error' ? last.error.message : '';
      }),
    };
  } finally {
    await Promise.all(candidates.map((candidate) => candidate.resign()));
    for (const client of clients) client.disconnect();
    await ha.close();
  }
}

function report(title: string, figures: ElectorGapFigures): void {
  console.log(`redis elector failover: ${title}: ${JSON.stringify(figures)}`);
  const file = process.env.FLEETCRON_FAILOVER_REPORT;
  if (file) {
    const record = { backend: 'redis elector', case: title, at: new Date().toISOString() };
    appendFileSync(file, `${JSON.stringify({ ...record, ...figures })}\n`);
  }
}

// skipped (and listed as skipped) unless FLEETCRON_FAILOVER=1: a measurement, not a check of the default run
describe.skipIf(!long)('RedisElector across a Sentinel failover with a lagging replica', () => {
  it(`without replicaAck (${RUNS} runs): measured`, { timeout: RUNS * 60_000 }, async () => {
    const runs: ElectorGapFigures[] = [];
    for (let run = 0; run < RUNS; run++) {
      runs.push(await runOnce(undefined));
      report('replica lagging 1.5 s, then primary SIGKILLed', runs[run]!);
    }
    for (const figures of runs) expect(figures.leaderBackMs, 'someone leads again').not.toBeNull();
  });

  it(`with replicaAck (${RUNS} runs): never two leaders`, { timeout: RUNS * 60_000 }, async () => {
    const runs: ElectorGapFigures[] = [];
    for (let run = 0; run < RUNS; run++) {
      runs.push(await runOnce(ACK));
      report('replica lagging 1.5 s, then primary SIGKILLed, replicaAck', runs[run]!);
    }
    // every run reported first, then judged
    for (const figures of runs) {
      expect(figures.electedDuringLag, 'a win the replica never acknowledged').toBe(false);
      expect(figures.overlapMs, 'two leaders at once').toBe(0);
    }
    // 3 of 24 runs so far had nobody elected within the watch (docs/performance/failover.md)
    for (const figures of runs) expect(figures.leaderBackMs, 'someone leads again').not.toBeNull();
  });
});
