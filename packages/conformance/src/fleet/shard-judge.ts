import type { LedgerEntry } from './ledger.js';

/**
 * Judgements of the sharded-fire fleet scenarios, from the append-only ledger: pure functions,
 * each returning one sentence per violation (an empty list when the rule holds).
 */

const time = (ms: number) => new Date(ms).toISOString().slice(11, 23);

/** Start lines of the parts of `job`'s fire `fireAt`, by part index. */
export function partsOf(
  starts: readonly LedgerEntry[],
  fireAt: number,
): Map<number, LedgerEntry[]> {
  const byIndex = new Map<number, LedgerEntry[]>();
  for (const s of starts) {
    if (s.fireAt !== fireAt || s.shard === undefined) continue;
    byIndex.set(s.shard.index, [...(byIndex.get(s.shard.index) ?? []), s]);
  }
  return byIndex;
}

/**
 * Every part `0 … count − 1` of each fire in `fires` started exactly once, with its `ctx.shard`.
 * `lostToKill`: parts (`fireAt/index`, see {@link partsLostToKill}) a SIGKILLed process had
 * claimed and never started; each may have started once or not at all.
 */
export function partViolations(
  starts: readonly LedgerEntry[],
  fires: readonly number[],
  count: number,
  lostToKill: ReadonlySet<string> = new Set(),
): string[] {
  const violations: string[] = [];
  for (const fireAt of fires) {
    const parts = partsOf(starts, fireAt);
    for (let index = 0; index < count; index++) {
      const runs = parts.get(index) ?? [];
      if (runs.length === 1 && runs[0]!.shard?.count === count) continue;
      if (runs.length === 0 && lostToKill.has(`${fireAt}/${index}`)) continue;
      const who = runs.map((r) => `${r.instance} (count ${r.shard?.count})`).join(', ');
      violations.push(
        `fire ${time(fireAt)} part ${index}/${count} started ${runs.length} times${who ? `: ${who}` : ''}`,
      );
    }
    const extra = [...parts.keys()].filter((i) => i < 0 || i >= count);
    if (extra.length > 0) violations.push(`fire ${time(fireAt)} ran parts ${extra} of ${count}`);
  }
  return violations;
}

/**
 * The spread bound of one fire: with `live` instances, none runs more than ⌈n / live⌉ + 1 parts
 * while another live instance runs none. `live`: the instances live at that fire.
 */
export function spreadViolation(
  starts: readonly LedgerEntry[],
  fireAt: number,
  count: number,
  live: readonly string[],
): string | null {
  const per = new Map<string, number>(live.map((id) => [id, 0]));
  for (const s of starts) {
    if (s.fireAt === fireAt && s.shard) per.set(s.instance, (per.get(s.instance) ?? 0) + 1);
  }
  const bound = Math.ceil(count / live.length) + 1;
  const idle = live.filter((id) => per.get(id) === 0);
  const heavy = [...per].filter(([, n]) => n > bound);
  if (idle.length === 0 || heavy.length === 0) return null;
  const spread = [...per].map(([id, n]) => `${id} ${n}`).join(', ');
  return `fire ${time(fireAt)}: ${heavy.map(([id]) => id).join(', ')} ran more than ⌈${count}/${live.length}⌉ + 1 = ${bound} parts while ${idle.join(', ')} ran none (${spread})`;
}

/**
 * The parts (`fireAt/index`) `instance` claimed and never started before it was SIGKILLed at
 * `killedAt` (host monotonic ms): claims it sent within `windowMs` before the kill with no answer
 * line (in flight: the backend may have granted them to a dead process), or answered `won` with
 * no start and no hand-back. Such a part is lost by the kill's timing (a holder that dies between
 * its win and its start: `onHolderLost` decides, `'record'` by default), not by the lock.
 */
export function partsLostToKill(
  entries: readonly LedgerEntry[],
  instance: string,
  killedAt: number,
  windowMs: number,
): Set<string> {
  const partOf = (e: LedgerEntry) => {
    const [, part, position] = (e.job ?? '').split('\u001f'); // job␟part␟index/count
    const index = part === 'part' ? position?.split('/')[0] : undefined;
    return index === undefined || e.fireAt === undefined ? null : `${e.fireAt}/${index}`;
  };
  const sent = new Map<string, number>(); // claims without an answer yet
  const won = new Set<string>();
  for (const e of entries) {
    if (e.instance !== instance) continue;
    if (e.kind === 'start' || e.kind === 'withdraw') {
      const index = e.shard?.index;
      const part = e.kind === 'start' ? `${e.fireAt}/${index}` : partOf(e);
      if (part !== null) won.delete(part);
      continue;
    }
    const part = partOf(e);
    if (part === null) continue;
    if (e.kind === 'claim' && e.mono >= killedAt - windowMs) sent.set(part, e.mono);
    if (e.kind === 'claimed') {
      sent.delete(part);
      if (e.status === 'won' && e.mono >= killedAt - windowMs) won.add(part);
    }
  }
  return new Set([...sent.keys(), ...won]);
}

/** Runs that started and never ended (their process died mid-run). */
export function openRuns(entries: readonly LedgerEntry[], instance: string): LedgerEntry[] {
  const ended = new Set(
    entries
      .filter((e) => e.kind === 'end' && e.instance === instance)
      .map((e) => `${e.job} ${e.fireAt} ${e.shard?.index}`),
  );
  return entries.filter(
    (e) =>
      e.kind === 'start' &&
      e.instance === instance &&
      !ended.has(`${e.job} ${e.fireAt} ${e.shard?.index}`),
  );
}

/**
 * Claims `instance` sent and has no answer for yet (a `claim` line with no `claimed` line after
 * it for the same key and fire). A process killed with one in flight may have won that fire at
 * the backend and never start it: a fire lost by the kill, not by the lock.
 */
export function claimsInFlight(entries: readonly LedgerEntry[], instance: string): LedgerEntry[] {
  const open = new Map<string, LedgerEntry[]>();
  for (const e of entries) {
    if (e.instance !== instance || (e.kind !== 'claim' && e.kind !== 'claimed')) continue;
    const key = `${e.job} ${e.fireAt}`;
    const sent = open.get(key) ?? [];
    if (e.kind === 'claim') open.set(key, [...sent, e]);
    else open.set(key, sent.slice(1));
  }
  return [...open.values()].flat();
}

/**
 * Fire times at which `instance` holds claims it has not started a run for: claims still in
 * flight ({@link claimsInFlight}) plus claims it won, beyond the runs it started. A process
 * killed then loses those fires by the kill's timing (won at the backend, never started).
 */
export function claimsNotStarted(entries: readonly LedgerEntry[], instance: string): number[] {
  const owed = new Map<number, number>();
  const add = (fireAt: number | undefined, n: number) => {
    if (fireAt !== undefined) owed.set(fireAt, (owed.get(fireAt) ?? 0) + n);
  };
  for (const e of claimsInFlight(entries, instance)) add(e.fireAt, 1);
  for (const e of entries) {
    if (e.instance !== instance) continue;
    if (e.kind === 'claimed' && e.status === 'won') add(e.fireAt, 1);
    if (e.kind === 'start' || e.kind === 'withdraw') add(e.fireAt, -1); // run, or handed back
  }
  return [...owed]
    .filter(([, n]) => n > 0)
    .map(([fireAt]) => fireAt)
    .sort((a, b) => a - b);
}
