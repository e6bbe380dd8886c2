import type { LedgerEntry } from './ledger.js';

/**
 * Judgements of the leader-mode fleet scenarios, from the append-only ledger: pure functions,
 * each returning one sentence per violation (an empty list when the rule holds).
 */

/** A span after a fault in which fires may be missed (nobody leads yet), epoch ms. */
export interface TakeoverWindow {
  /** What happened, for messages (e.g. `SIGKILL of leader-a`). */
  what: string;
  /** When the fault began. */
  from: number;
  /** The latest moment by which a new leader must run the fires again. */
  to: number;
}

const time = (ms: number) => new Date(ms).toISOString().slice(11, 23);

/** Fires (by `fireAt`) that started more than once: one sentence each, naming every run. */
export function duplicateFires(starts: readonly LedgerEntry[]): string[] {
  const byFire = new Map<number, LedgerEntry[]>();
  for (const s of starts) byFire.set(s.fireAt ?? 0, [...(byFire.get(s.fireAt ?? 0) ?? []), s]);
  const violations: string[] = [];
  for (const [fireAt, runs] of byFire) {
    if (runs.length < 2) continue;
    const who = runs.map((r) => `${r.instance} token ${r.token}`).join(', ');
    violations.push(`fire ${time(fireAt)} started ${runs.length} times: ${who}`);
  }
  return violations;
}

/** What {@link missedFires} checks. */
export interface MissedFiresInput {
  starts: readonly LedgerEntry[];
  /** First and last fire (epoch ms, on the schedule) that must have run. */
  first: number;
  last: number;
  /** The schedule's interval, ms (fires at multiples of it). */
  everyMs: number;
  /** Fires inside any of these may be missed. */
  windows: readonly TakeoverWindow[];
}

/** Fires from `first` to `last` that never started although no takeover window covers them. */
export function missedFires({ starts, first, last, everyMs, windows }: MissedFiresInput): string[] {
  const ran = new Set(starts.map((s) => s.fireAt));
  const violations: string[] = [];
  for (let t = Math.ceil(first / everyMs) * everyMs; t <= last; t += everyMs) {
    if (ran.has(t) || windows.some((w) => t >= w.from && t <= w.to)) continue;
    const around = windows.map((w) => `${w.what} ${time(w.from)}–${time(w.to)}`).join('; ');
    violations.push(
      `fire ${time(t)} never ran, outside every takeover window (${around || 'none'})`,
    );
  }
  return violations;
}

/** The `leader` lines of the ledger that announce an election, in host-monotonic order. */
export function electedLines(entries: readonly LedgerEntry[]): LedgerEntry[] {
  return entries
    .filter((e) => e.kind === 'leader' && e.isLeader === true)
    .sort((a, b) => a.mono - b.mono);
}

/**
 * Terms must strictly increase in the order instances were elected (every elected line's term
 * above the previous one's), and a lost line must name a term its instance was elected with.
 */
export function termViolations(entries: readonly LedgerEntry[]): string[] {
  const violations: string[] = [];
  const elected = electedLines(entries);
  for (let i = 1; i < elected.length; i++) {
    const [before, after] = [elected[i - 1]!, elected[i]!];
    if ((after.term ?? 0) <= (before.term ?? 0)) {
      violations.push(
        `term ${after.term} of ${after.instance} was elected after term ${before.term} of ${before.instance}: terms must strictly increase`,
      );
    }
  }
  for (const lost of entries.filter((e) => e.kind === 'leader' && e.isLeader === false)) {
    if (!elected.some((e) => e.instance === lost.instance && e.term === lost.term)) {
      violations.push(`${lost.instance} lost term ${lost.term}, which it was never elected with`);
    }
  }
  return violations;
}
