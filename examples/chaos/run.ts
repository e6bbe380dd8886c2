/**
 * The chaos fleet driver, for soak runs:
 *
 *   pnpm --filter @fleetcron/examples chaos -- --backend redis --seconds 60
 *   pnpm --filter @fleetcron/examples chaos -- --backend all --seconds 600 --keep-ledger
 *   pnpm --filter @fleetcron/examples chaos -- --topology etcd-cluster,pg-sync --seconds 40
 *
 * Per backend: a dedicated server, four instance processes (clocks −2 s, 0, +1.5 s, +3 s under
 * libfaketime), cycles of SIGKILL + restart, SIGSTOP for two leases, server restart and dropped
 * connections, then the ledger's verdict as one summary line (and each violation). With
 * `--topology` (a list, or `all`): the HA form instead, whose leader/primary is killed and
 * promoted away at least twice per run; it also fails when claims do not come back within the
 * topology's bound. Exits 1 when any check fails.
 */
import {
  CHAOS_BACKENDS,
  CHAOS_TOPOLOGIES,
  type ChaosBackendName,
  type ChaosTopologyName,
  chaosBackendName,
  chaosTopologyName,
  TOPOLOGY_BACKEND,
} from './backends.js';
import { runChaos } from './chaos.js';
import { missedAllowance } from './judge.js';

function arg(name: string, fallback: string): string {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
}

async function main(): Promise<number> {
  const backendArg = arg('backend', 'all');
  const seconds = Number(arg('seconds', '60'));
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new Error(`--seconds must be a positive number of seconds, got "${arg('seconds', '')}"`);
  }
  const keepLedger = process.argv.includes('--keep-ledger');
  const topologyArg = arg('topology', '');
  const topologies: ChaosTopologyName[] =
    topologyArg === 'all'
      ? [...CHAOS_TOPOLOGIES]
      : topologyArg === ''
        ? []
        : topologyArg.split(',').map(chaosTopologyName);
  const backends: ChaosBackendName[] =
    backendArg === 'all' ? [...CHAOS_BACKENDS] : backendArg.split(',').map(chaosBackendName);
  const runs: { backend: ChaosBackendName; topology?: ChaosTopologyName }[] =
    topologies.length > 0
      ? topologies.map((topology) => ({ backend: TOPOLOGY_BACKEND[topology], topology }))
      : backends.map((backend) => ({ backend }));
  let failed = false;
  const summaries: string[] = [];
  for (const { backend, topology } of runs) {
    const report = await runChaos({ backend, topology, seconds, keepLedger, log: console.log });
    const v = report.verdict;
    const problems = [
      ...v.duplicates.map((p) => `duplicate: ${p}`),
      ...v.tokenOrder.map((p) => `token order: ${p}`),
      ...v.startedAfterDeadline.map((p) => `started after lease: ${p}`),
      ...v.succeededAfterDeadline.map((p) => `succeeded after lease: ${p}`),
      ...v.crashes.map((p) => `crash: ${p}`),
      ...v.skewErrors.map((p) => `skew: ${p}`),
      ...report.unexpectedExits.map((e) => `exit: ${e.instance} code ${e.code} ${e.stderr}`),
      ...report.claimsBack.map((p) => `claims back: ${p}`),
    ];
    if (report.runningRowsAfterStop > 0) {
      // reported, not failed: core does not retry an outcome write that failed in an outage yet
      console.log(
        `  warning: ${report.runningRowsAfterStop} history rows left running after stop()`,
      );
    }
    if (v.missedOutside.length > missedAllowance(v.expectedOutside)) {
      problems.push(`missed outside faults: ${v.missedOutside.join(', ')}`);
    }
    for (const p of problems) console.log(`  ${p}`);
    console.log(report.summary);
    if (keepLedger) console.log(`  ledger kept in ${report.ledgerDir}`);
    summaries.push(`${problems.length === 0 ? 'PASS' : 'FAIL'} ${report.summary}`);
    failed ||= problems.length > 0;
  }
  console.log('');
  for (const s of summaries) console.log(s);
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
