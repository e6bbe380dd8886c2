import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHAOS_BACKENDS, loadChaosBackend } from '../chaos/backends.js';
import { runChaos } from '../chaos/chaos.js';
import { missedAllowance } from '../chaos/judge.js';

/**
 * The short chaos run (28 s per server backend, 22 s on SQLite): four instance processes with
 * clocks −2 s, 0, +1.5 s and +3 s (SQLite: the host's clock), one cycle of SIGKILL + restart,
 * SIGSTOP for two leases, server restart and dropped connections (not on SQLite), judged from
 * the ledger. The long version is `pnpm --filter @fleetcron/examples
 * chaos -- --backend all --seconds 600`.
 */
describe.each(CHAOS_BACKENDS)('chaos fleet on %s', (backend) => {
  it('runs every fire at most once, in token order, never past its lease', async () => {
    const report = await runChaos({ backend, seconds: 28, keepLedger: true });
    const v = report.verdict;
    console.log(report.summary); // the numbers, also when the run passes
    const where = `${report.summary}\nledger: ${report.ledgerDir}`;
    // every fault the backend takes, once: all four on a server, kill and freeze on SQLite
    const { faults } = await loadChaosBackend(backend);
    expect(
      report.faults.map((f) => f.kind),
      where,
    ).toEqual(faults);
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
