import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { hostMonotonicMs } from '../fleet/ledger.js';

/** What one line of an {@link ElectionLedger} records. */
export type ElectionLedgerKind =
  /** The candidate learnt it was elected (`term`): from here on it may act. */
  | 'elected'
  /** The leader acted: `isLeader` was true and it did its side effect under `term`. */
  | 'act'
  /** The signal of `term` was aborted. */
  | 'abort'
  /** The instance froze (SIGSTOP or a blocked event loop). */
  | 'freeze'
  /** The instance was let go after the freeze. */
  | 'thaw'
  /** The instance's process was killed (SIGKILL). */
  | 'killed';

/** One line of the ledger. */
export interface ElectionLedgerEntry {
  kind: ElectionLedgerKind;
  /** Candidate id the line is about. */
  instance: string;
  /** Host monotonic time it was written (shared by every process of the host), ms. */
  mono: number;
  /** Process that wrote it. */
  pid: number;
  term?: number;
}

/**
 * An append-only ledger shared by processes, like the fleet suite's `Ledger`: one JSON line per
 * event, one synchronous `write` on an `O_APPEND` file, ordered by the host monotonic clock. The
 * elector scenarios judge leadership from it, never from a candidate's own state.
 */
export class ElectionLedger {
  private fd: number | null;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'a');
  }

  /** Appends one line; a no-op after {@link close}. */
  write(entry: Omit<ElectionLedgerEntry, 'mono' | 'pid'>): void {
    if (this.fd === null) return;
    const line: ElectionLedgerEntry = { ...entry, mono: hostMonotonicMs(), pid: process.pid };
    writeSync(this.fd, `${JSON.stringify(line)}\n`);
  }

  /** Every line written so far, by every process. */
  read(): ElectionLedgerEntry[] {
    return readFileSync(this.path, 'utf8')
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as ElectionLedgerEntry);
  }

  /** Closes the file; idempotent. */
  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }
}

/** How strictly {@link electionViolations} judges. */
export interface JudgeOptions {
  /**
   * Also require that an old term's signal aborted BEFORE a newer term was elected, for
   * instances that were not frozen at that moment. Only where the old leader's process ran
   * freely (not in a scenario that blocks the whole process the new leader runs in).
   */
  abortBeforeNext: boolean;
  /** Require one leader at a time (off only for non-durable backends across a restart). */
  oneLeader: boolean;
}

/**
 * The safety rules, from the ledger: terms strictly increase in the order they were elected and
 * are never handed out twice; no leader acts under a term once a newer term was elected; the
 * signal of every replaced term of an instance that was not killed was aborted (and, with
 * `abortBeforeNext`, before the newer term was elected unless its holder was frozen then).
 */
export function electionViolations(
  entries: ElectionLedgerEntry[],
  options: JudgeOptions,
): string[] {
  const violations: string[] = [];
  const elected = entries.filter((e) => e.kind === 'elected').sort((a, b) => a.mono - b.mono);
  for (let i = 1; i < elected.length; i++) {
    const before = elected[i - 1]!;
    const after = elected[i]!;
    if ((after.term ?? 0) <= (before.term ?? 0)) {
      violations.push(
        `term ${after.term} (${after.instance}) was elected after term ${before.term} (${before.instance}): terms must strictly increase`,
      );
    }
  }
  const killed = new Set(entries.filter((e) => e.kind === 'killed').map((e) => e.instance));
  for (const old of elected) {
    const newer = elected.find((e) => (e.term ?? 0) > (old.term ?? 0) && e.mono > old.mono);
    if (!newer) continue;
    const acts = entries.filter(
      (e) => e.kind === 'act' && e.instance === old.instance && e.term === old.term,
    );
    const late = acts.find((e) => e.mono >= newer.mono);
    if (options.oneLeader && late) {
      violations.push(
        `${old.instance} acted under term ${old.term} ${Math.round(late.mono - newer.mono)} ms after ${newer.instance} was elected with term ${newer.term}: two leaders at once`,
      );
    }
    if (killed.has(old.instance)) continue;
    const abort = entries.find(
      (e) => e.kind === 'abort' && e.instance === old.instance && e.term === old.term,
    );
    if (!abort) {
      violations.push(
        `${old.instance}'s signal of term ${old.term} was never aborted, though term ${newer.term} was elected`,
      );
      continue;
    }
    if (
      options.abortBeforeNext &&
      abort.mono > newer.mono &&
      !frozenAt(entries, old.instance, newer.mono)
    ) {
      violations.push(
        `${old.instance}'s signal of term ${old.term} aborted ${Math.round(abort.mono - newer.mono)} ms after term ${newer.term} was elected (it must abort before)`,
      );
    }
  }
  return violations;
}

/** Whether `instance` was between a freeze and its thaw at host monotonic time `mono`. */
function frozenAt(entries: ElectionLedgerEntry[], instance: string, mono: number): boolean {
  const freeze = entries.find(
    (e) => e.kind === 'freeze' && e.instance === instance && e.mono <= mono,
  );
  if (!freeze) return false;
  const thaw = entries.find(
    (e) => e.kind === 'thaw' && e.instance === instance && e.mono >= freeze.mono,
  );
  return !thaw || thaw.mono >= mono;
}

/** The ledger as readable lines, times relative to the first line (for failure messages). */
export function formatElectionLedger(entries: ElectionLedgerEntry[]): string {
  const start = entries[0]?.mono ?? 0;
  return entries
    .map(
      (e) =>
        `${(e.mono - start).toFixed(1).padStart(9)} ms  ${e.instance.padEnd(14)} ${e.kind}${e.term === undefined ? '' : ` term ${e.term}`}`,
    )
    .join('\n');
}
