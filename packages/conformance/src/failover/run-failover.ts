import { appendFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  describeFailover,
  type FailoverOutcome,
  type FailoverRunOptions,
  type FailoverTopology,
  runFailover,
} from './failover-scenario.js';

/** One failover case of {@link runFailoverConformance}. */
export interface FailoverCase {
  /** Test title, e.g. `leader SIGKILLed during a burst of claims`. */
  title: string;
  /** A fresh topology for this case (started here, closed after it). */
  topology: () => Promise<FailoverTopology>;
  /** Scenario options (instances, jobs, faults, ...). */
  run?: FailoverRunOptions;
  /**
   * `'none'` (default): the case fails on any duplicate. `'measure'`: duplicates are reported, not
   * asserted (asynchronous replication, where the README states the gap).
   */
  duplicates?: 'none' | 'measure';
  /** The case fails when claims take longer than this to succeed again after a fault, ms. */
  resumeWithinMs?: number;
  /** Test timeout, ms. Default 120 000. */
  timeoutMs?: number;
}

/** Options of {@link runFailoverConformance}. */
export interface FailoverConformanceOptions {
  /** Backend name for the describe block, e.g. `etcd (3 members)`. */
  name: string;
  cases: FailoverCase[];
}

/**
 * Registers the failover scenarios (`describe(`${name} failover`)`, one `it` per case): real
 * schedulers claim a steady burst while the case's fault hits the topology; judged from the
 * append-only ledger of runs. Every case asserts: no unhandled error, fencing tokens increasing
 * per job, claims succeeding again after every fault (within
 * `resumeWithinMs` when given), and no duplicate unless `duplicates: 'measure'`. Fires missed
 * before the fault are reported, not asserted (under CPU load a fleet can miss a fire without any
 * fault). The figures are printed, and appended as a JSON line to the file `FLEETCRON_FAILOVER_REPORT` names, if set.
 */
export function runFailoverConformance(options: FailoverConformanceOptions): void {
  describe(`${options.name} failover`, () => {
    for (const c of options.cases) {
      it(
        c.title,
        async () => {
          const topology = await c.topology();
          let outcome: FailoverOutcome;
          try {
            outcome = await runFailover(topology, c.run);
          } finally {
            await topology.close();
          }
          const line = `${options.name}: ${c.title}: ${describeFailover(outcome)}`;
          console.log(line);
          const reportFile = process.env.FLEETCRON_FAILOVER_REPORT;
          if (reportFile) {
            const record = { backend: options.name, case: c.title, at: new Date().toISOString() };
            appendFileSync(reportFile, `${JSON.stringify({ ...record, ...outcome })}\n`);
          }
          expect(outcome.crashes, 'no unhandled rejection or uncaught exception').toEqual([]);
          expect(outcome.tokenOrder, 'tokens increasing with fire times per job').toEqual([]);
          if ((c.duplicates ?? 'none') === 'none') {
            expect(outcome.duplicates, 'fires that ran more than once').toEqual([]);
          }
          for (const [i, fault] of outcome.faults.entries()) {
            expect(fault.resumeMs, `claims succeeded again after fault ${i + 1}`).not.toBeNull();
            if (c.resumeWithinMs !== undefined) {
              expect(fault.resumeMs, `time to resume after fault ${i + 1}`).toBeLessThanOrEqual(
                c.resumeWithinMs,
              );
            }
          }
        },
        c.timeoutMs ?? 120_000,
      );
    }
  });
}
