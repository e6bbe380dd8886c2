import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@fleetcron/core';
import {
  type ChaosBackendName,
  type ChaosTopologyName,
  loadChaosTarget,
  type TOPOLOGY_BACKEND,
} from './backends.js';
import {
  CLAIMS_BACK_BOUND_MS,
  claimsBackViolations,
  describeFailovers,
  type FailoverFigures,
  failoverFigures,
} from './failover.js';
import { type FaultWindow, planFaults, QUIET_END_SECONDS, runFaults } from './faults.js';
import { CHAOS_FLEET, ChaosFleet, type UnexpectedExit } from './fleet.js';
import { CHAOS_JOBS, CHAOS_LEASE_MS } from './jobs.js';
import { judge, summaryLine, type Verdict } from './judge.js';
import { monoNow, readLedgers } from './ledger.js';

/** Options of {@link runChaos}. */
export interface ChaosOptions {
  backend: ChaosBackendName;
  /**
   * Run on this HA form instead of a single server (`backend` is then its
   * {@link TOPOLOGY_BACKEND}): the only fault is the failover of the leader/primary, at least
   * twice per run, and claims must come back within {@link CLAIMS_BACK_BOUND_MS}.
   */
  topology?: ChaosTopologyName;
  /** Length of the run; rounded up to one full fault cycle (28 s). */
  seconds: number;
  /** Where the ledgers go. Default: a fresh temp dir, removed afterwards unless `keepLedger`. */
  ledgerDir?: string;
  keepLedger?: boolean;
  /** Progress lines. Default: none. */
  log?: (line: string) => void;
}

/** A judged chaos run. */
export interface ChaosReport {
  backend: ChaosBackendName;
  topology?: ChaosTopologyName;
  /** Per failover (topology runs): what was killed, how long until claims succeeded again. */
  failovers: FailoverFigures[];
  /** Failovers whose claims did not come back within the topology's stated bound. */
  claimsBack: string[];
  verdict: Verdict;
  /** The faults as injected. */
  faults: FaultWindow[];
  /** Exits of instance processes the driver did not cause. */
  unexpectedExits: UnexpectedExit[];
  /** Ledger lines torn by a SIGKILL mid-write (ignored). */
  tornLines: number;
  /** History rows still `running` after the fleet stopped (Store backends only)... */
  runningRows: number;
  /**
   * ...of which written by an instance that stopped cleanly (`stop()` returned). Reported, not
   * judged: today an outcome write that fails during a server outage is not retried.
   */
  runningRowsAfterStop: number;
  ledgerDir: string;
  summary: string;
}

/**
 * Statuses of every execution in the Store's history, by `job|fireAt|token`, and the instances
 * of the rows still `running`.
 */
async function storeStatuses(store: Store) {
  const out = new Map<string, string>();
  const runningBy: string[] = [];
  for (const job of CHAOS_JOBS) {
    let cursor: string | null = null;
    do {
      const page = await store.history(job.name, { limit: 1000, cursor });
      for (const e of page.executions) {
        if (e.token !== null && e.status !== 'skipped') {
          out.set(`${e.job}|${e.fireAt}|${e.token}`, e.status);
        }
        if (e.status === 'running') runningBy.push(e.instanceId);
      }
      cursor = page.nextCursor;
    } while (cursor);
  }
  return { statuses: out, runningBy };
}

/**
 * Runs the chaos fleet on one backend: a dedicated server, four instance processes with skewed
 * clocks, the fault plan of {@link planFaults}, then a clean stop and the ledger's verdict.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => {});
  const ledgerDir = options.ledgerDir ?? mkdtempSync(join(tmpdir(), 'fleetcron-chaos-'));
  const target = options.topology ?? options.backend;
  const backend = await loadChaosTarget(target);
  const server = await backend.startServer();
  const fleet = new ChaosFleet({ backend: target, address: server.address, ledgerDir });
  // a topology is failed over twice per run at least
  const plan = planFaults(options.seconds, backend.faults, options.topology ? 2 : 1);
  const specs = CHAOS_FLEET.map((spec) => (backend.hostClock ? { ...spec, skewMs: 0 } : spec));
  try {
    await Promise.all(specs.map((spec) => fleet.start(spec)));
    const startMono = monoNow();
    const epochMinusMono = Date.now() - monoNow();
    const clocks = specs
      .map((s) => `${s.name} ${s.skewMs >= 0 ? '+' : ''}${s.skewMs} ms`)
      .join(', ');
    log(`${target}: 4 instances up (${clocks}), running ${plan.seconds} s, ledger ${ledgerDir}`);
    const faults = await runFaults(
      plan.faults,
      startMono,
      { fleet, server, ledgerDir, leaseMs: CHAOS_LEASE_MS },
      log,
    );
    const remaining = startMono + plan.seconds * 1000 - monoNow();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, remaining)));
    const stopMono = monoNow();
    await fleet.stopAll();

    const { lines, torn } = readLedgers(ledgerDir);
    let statuses: Map<string, string> | undefined;
    let runningBy: string[] = [];
    const reader = await server.openStore();
    if (reader) {
      try {
        ({ statuses, runningBy } = await storeStatuses(reader.store));
      } finally {
        await reader.close();
      }
    }
    const stoppedCleanly = new Set(lines.filter((l) => l.kind === 'exit').map((l) => l.instance));
    const runningRowsAfterStop = runningBy.filter((i) => stoppedCleanly.has(i)).length;
    const verdict = judge({
      lines,
      jobs: CHAOS_JOBS,
      leaseMs: CHAOS_LEASE_MS,
      faults,
      epochMinusMono,
      countFrom: startMono + epochMinusMono + 2_500,
      countTo: stopMono + epochMinusMono - QUIET_END_SECONDS * 1000,
      storeStatuses: statuses,
    });
    const failovers = failoverFigures(lines, faults);
    const bound = options.topology ? CLAIMS_BACK_BOUND_MS[options.topology] : 0;
    const claimsBack = options.topology ? claimsBackViolations(failovers, bound) : [];
    const failoverPart = options.topology ? `; ${describeFailovers(failovers, bound)}` : '';
    const summary = `${summaryLine(target, verdict)}; unexpected exits ${fleet.unexpectedExits.length}, rows left running ${runningBy.length} (${runningRowsAfterStop} after a clean stop)${failoverPart}`;
    return {
      backend: options.backend,
      topology: options.topology,
      failovers,
      claimsBack,
      verdict,
      faults,
      unexpectedExits: fleet.unexpectedExits,
      tornLines: torn,
      runningRows: runningBy.length,
      runningRowsAfterStop,
      ledgerDir,
      summary,
    };
  } finally {
    await fleet.stopAll();
    await server.close();
    if (!options.keepLedger && !options.ledgerDir)
      rmSync(ledgerDir, { recursive: true, force: true });
  }
}
