import type { Execution } from '@fleetcron/core';
import type { LedgerEntry } from './ledger.js';

/** What {@link ledgerViolations} judges. */
export interface LedgerJudgement {
  /** Every ledger line of the scenario. */
  entries: LedgerEntry[];
  /** The jobs' lease, ms. */
  leaseMs: number;
  /** The job's history from the store, read after every instance stopped. */
  executions: Execution[];
}

const describeRun = (e: { instance: string; fireAt?: number; token?: number | null }) =>
  `${e.instance} fire ${new Date(e.fireAt ?? 0).toISOString()} token ${e.token}`;

const ms = (n: number) => `${Math.round(n)} ms`;

/** The newest line before `before` that matches. */
function lastBefore(
  entries: LedgerEntry[],
  before: number,
  match: (e: LedgerEntry) => boolean,
): LedgerEntry | undefined {
  let found: LedgerEntry | undefined;
  for (const e of entries) if (e.mono <= before && match(e)) found = e;
  return found;
}

/**
 * Send times of the claim and of every successful renewal of one run: its deadline after each
 * is that time + the lease (the backend received the request later, so expires it later).
 */
function grantSendTimes(entries: LedgerEntry[], run: LedgerEntry): number[] {
  const times: number[] = [];
  let pendingExtend: number | null = null;
  for (const e of entries) {
    if (e.instance !== run.instance || e.fireAt !== run.fireAt) continue;
    if (e.kind === 'claimed' && e.token === run.token) {
      const sent = lastBefore(
        entries,
        e.mono,
        (c) => c.kind === 'claim' && c.instance === run.instance && c.fireAt === run.fireAt,
      );
      if (sent) times.push(sent.mono);
    } else if (e.kind === 'extend' && e.token === run.token) {
      pendingExtend = e.mono;
    } else if (e.kind === 'extended' && e.token === run.token) {
      if (e.status === 'renewed' && pendingExtend !== null) times.push(pendingExtend);
      pendingExtend = null;
    }
  }
  return times;
}

/**
 * Safety rules judged from the ledger (and the store's history), for every instance. Returns one
 * sentence per violation, an empty list when all hold:
 *
 * 1. No job starts after its claim's deadline (claim send time + lease).
 * 2. Tokens of started runs strictly increase in start order.
 * 3. No fire starts twice.
 * 4. No run is recorded `succeeded` when its job ended after its last deadline (the send time
 *    of its claim or of its last successful renewal + lease).
 * 5. No history row is still `running` after every instance stopped.
 */
export function ledgerViolations({ entries, leaseMs, executions }: LedgerJudgement): string[] {
  const violations: string[] = [];
  const starts = entries.filter((e) => e.kind === 'start').sort((a, b) => a.mono - b.mono);
  for (const start of starts) {
    const claim = lastBefore(
      entries,
      start.mono,
      (e) => e.kind === 'claim' && e.instance === start.instance && e.fireAt === start.fireAt,
    );
    if (!claim) violations.push(`${describeRun(start)} started with no claim in the ledger`);
    else if (start.mono - claim.mono > leaseMs) {
      violations.push(
        `${describeRun(start)} started ${ms(start.mono - claim.mono)} after sending its claim, past its ${ms(leaseMs)} lease`,
      );
    }
  }
  for (let i = 1; i < starts.length; i++) {
    const [before, after] = [starts[i - 1]!, starts[i]!];
    if ((after.token ?? 0) <= (before.token ?? 0)) {
      violations.push(
        `tokens out of start order: ${describeRun(after)} started after ${describeRun(before)}`,
      );
    }
  }
  const byFire = new Map<number, LedgerEntry[]>();
  for (const s of starts) byFire.set(s.fireAt ?? 0, [...(byFire.get(s.fireAt ?? 0) ?? []), s]);
  for (const [fireAt, runs] of byFire) {
    if (runs.length > 1) {
      violations.push(
        `fire ${new Date(fireAt).toISOString()} started ${runs.length} times: ${runs.map(describeRun).join('; ')}`,
      );
    }
  }
  for (const execution of executions) {
    const run = {
      instance: execution.instanceId,
      fireAt: execution.fireAt,
      token: execution.token,
    };
    if (execution.status === 'running') {
      violations.push(`${describeRun(run)} is still recorded running after stop()`);
    }
    if (execution.status !== 'succeeded') continue;
    const end = entries.find(
      (e) =>
        e.kind === 'end' &&
        e.instance === run.instance &&
        e.fireAt === run.fireAt &&
        e.token === run.token,
    );
    if (!end) continue;
    const deadline = Math.max(...grantSendTimes(entries, end)) + leaseMs;
    if (end.mono > deadline) {
      violations.push(
        `${describeRun(run)} was recorded succeeded, but its job ended ${ms(end.mono - deadline)} past its lease deadline`,
      );
    }
  }
  return violations;
}

/** The ledger as readable lines (times relative to the first line), for failure messages. */
export function formatLedger(entries: LedgerEntry[]): string {
  const origin = entries[0]?.mono ?? 0;
  return entries
    .map((e) => {
      const extra = [
        e.fireAt === undefined ? '' : `fire ${new Date(e.fireAt).toISOString().slice(11, 23)}`,
        e.token === undefined ? '' : `token ${e.token}`,
        e.status ?? '',
        e.point ?? '',
        e.aborted === undefined ? '' : `aborted=${e.aborted}`,
        e.job === undefined ? '' : `job ${e.job}`,
        e.catchUp ? 'catch-up' : '',
        e.recovery ? 'recovery' : '',
        e.requestedBy ? `requestedBy ${e.requestedBy}` : '',
      ].filter(Boolean);
      return `+${ms(e.mono - origin).padStart(8)} ${e.instance} ${e.kind} ${extra.join(' ')}`;
    })
    .join('\n');
}
