import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHAOS_BACKENDS } from '../chaos/backends.js';
import { runChaos } from '../chaos/chaos.js';
import { missedAllowance } from '../chaos/judge.js';

/**
 * The short chaos run (28 s per backend): four instance processes with clocks −2 s, 0, +1.5 s
 * and +3 s, one cycle of SIGKILL + restart, SIGSTOP for two leases, server restart and dropped
 * connections, judged from the ledger. The long version is `pnpm --filter @fleetcron/examples
 * chaos -- --backend all --seconds 600`.
 */
describe.each(CHAOS_BACKENDS)('chaos fleet on %s', (backend) => {
  it('runs every fire at most once, in token order, never past its lease', async () => {
    const report = await runChaos({ backend, seconds: 28, keepLedger: true });
    const v = report.verdict;
    console.log(report.summary); // the numbers, also when the run passes
    const where = `${report.summary}\nledger: ${report.ledgerDir}`;
    expect(
      report.faults.map((f) => f.kind),
      where,
    ).toEqual(['kill', 'freeze', 'server_restart', 'drop_connections']);
    expect(v.skewErrors, where).toEqual([]);
    expect(v.runs, where).toBeGreaterThan(100);
    expect(v.crashes, where).toEqual([]);
    expect(report.unexpectedExits, where).toEqual([]);
    expect(v.duplicates, where).toEqual([]);
    expect(v.tokenOrder, where).toEqual([]);
    expect(v.startedAfterDeadline, where).toEqual([]);
    expect(v.succeededAfterDeadline, where).toEqual([]);
    expect(v.expectedOutside, where).toBeGreaterThanOrEqual(15);
    expect(v.missedOutside.length, where).toBeLessThanOrEqual(missedAllowance(v.expectedOutside));
    rmSync(report.ledgerDir, { recursive: true, force: true });
  }, 120_000);
});
