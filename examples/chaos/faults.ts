import type { ChaosServer } from './backends.js';
import type { ChaosFleet } from './fleet.js';
import { type LedgerLine, monoNow, readLedgers } from './ledger.js';

/** A fault the driver injects. */
export type FaultKind = 'kill' | 'freeze' | 'server_restart' | 'drop_connections' | 'failover';

/** Every fault of a single-server backend, in the order of a cycle (`failover` is the HA topologies'). */
export const ALL_FAULTS: readonly FaultKind[] = [
  'kill',
  'freeze',
  'server_restart',
  'drop_connections',
];

/** A fault as it happened: from when to when (monotonic ms), and which instance it hit. */
export interface FaultWindow {
  kind: FaultKind;
  /** The instance it hit (process faults), or what a failover killed. */
  target?: string;
  from: number;
  to: number;
  /** Failover: when the leader/primary was gone (monotonic ms). */
  killedAt?: number;
  /** Failover: when the promotion was done (the killed member is brought back after it). */
  promotedAt?: number;
}

/** A fault at a time, in seconds after the fleet is up. */
export interface PlannedFault {
  atSeconds: number;
  kind: FaultKind;
}

/** Seconds without faults at the start: fires there must all run. */
export const QUIET_START_SECONDS = 7;
/** Seconds without faults at the end (the last of them are not counted: see `chaos.ts`). */
export const QUIET_END_SECONDS = 5;
/**
 * One cycle: kill +0 s, freeze +3 s (two leases), restart +10 s, drop +13 s, each with the
 * seconds it takes (a kill waits for the restarted process; a freeze lasts 6 s plus up to 1 s
 * to reach its moment). An HA topology's cycle is one failover (kill of the leader/primary,
 * promotion, the killed member brought back as a follower: up to about 8 s).
 */
const CYCLE: readonly (PlannedFault & { takesSeconds: number })[] = [
  { atSeconds: 0, kind: 'kill', takesSeconds: 3 },
  { atSeconds: 3, kind: 'freeze', takesSeconds: 7 },
  { atSeconds: 10, kind: 'server_restart', takesSeconds: 3 },
  { atSeconds: 13, kind: 'drop_connections', takesSeconds: 3 },
  { atSeconds: 0, kind: 'failover', takesSeconds: 8 },
];
/** Cycles after the first start this much after the previous one's faults end (quiet gap). */
const CYCLE_GAP_SECONDS = 10;

/**
 * The fault plan of a run of `seconds` with the faults `kinds`: a quiet start, as many cycles as
 * fit (at least `minCycles`; quiet gaps between them), a quiet end. Returns the plan and the
 * run's length (at least one cycle: 28 s with all four faults, 22 s with kill and freeze; an HA
 * topology's two failovers: 38 s).
 */
export function planFaults(
  seconds: number,
  kinds: readonly FaultKind[] = ALL_FAULTS,
  minCycles = 1,
): { faults: PlannedFault[]; seconds: number } {
  const cycle = CYCLE.filter((f) => kinds.includes(f.kind));
  const cycleSeconds = Math.max(...cycle.map((f) => f.atSeconds + f.takesSeconds));
  const period = cycleSeconds + CYCLE_GAP_SECONDS;
  const room = seconds - QUIET_START_SECONDS - cycleSeconds - QUIET_END_SECONDS;
  const cycles = Math.max(minCycles, 1 + Math.max(0, Math.floor(room / period)));
  const faults: PlannedFault[] = [];
  for (let c = 0; c < cycles; c++) {
    const cycleStart = QUIET_START_SECONDS + c * period;
    for (const f of cycle) faults.push({ kind: f.kind, atSeconds: cycleStart + f.atSeconds });
  }
  const minimum = QUIET_START_SECONDS + (cycles - 1) * period + cycleSeconds + QUIET_END_SECONDS;
  return { faults, seconds: Math.max(seconds, minimum) };
}

/**
 * The instance with the most runs in progress right now (a `start` without its `end`), so that
 * process faults hit a holder; ties go to the one that started a run most recently.
 */
export function busiestInstance(lines: readonly LedgerLine[], names: readonly string[]): string {
  const open = new Map<string, { runs: number; last: number }>(); // by incarnation
  const latest = new Map<string, string>(); // name → its newest incarnation
  for (const l of lines) {
    if (l.kind === 'boot') latest.set(l.instance.split('#')[0] as string, l.instance);
    if (l.kind !== 'start' && l.kind !== 'end') continue;
    const entry = open.get(l.instance) ?? { runs: 0, last: 0 };
    entry.runs += l.kind === 'start' ? 1 : -1;
    if (l.kind === 'start') entry.last = l.mono;
    open.set(l.instance, entry);
  }
  const load = (name: string) => open.get(latest.get(name) ?? '') ?? { runs: 0, last: 0 };
  const ranked = [...names].sort(
    (a, b) => load(b).runs - load(a).runs || load(b).last - load(a).last,
  );
  return ranked[0] as string;
}

/** Waits `ms` of real time (the driver's own, unfaked clock). */
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * Waits until an instance with clock skew `skewMs` is most likely between winning a claim and
 * starting the job: its fires fall on whole seconds of its own clock, it wins their claims about
 * 5 to 40 ms later and starts them a few ms after that. A freeze there is the case where a holder
 * must not start after its lease (issue 11, point 1); a random offset spreads it over the steps.
 */
async function untilClaimPhase(skewMs: number): Promise<void> {
  const boundaryPhase = (((-skewMs % 1000) + 1000) % 1000) as number;
  const offset = 5 + Math.random() * 30;
  const now = Date.now(); // the driver's clock is not faked
  const phase = (((now - boundaryPhase) % 1000) + 1000) % 1000;
  await pause((1000 - phase + offset) % 1000);
}

/** Injects one fault and returns its window. */
export async function injectFault(
  kind: FaultKind,
  ctx: { fleet: ChaosFleet; server: ChaosServer; ledgerDir: string; leaseMs: number },
): Promise<FaultWindow> {
  const from = monoNow();
  const target = () => busiestInstance(readLedgers(ctx.ledgerDir).lines, ctx.fleet.names());
  switch (kind) {
    case 'kill': {
      const name = target();
      await ctx.fleet.killAndRestart(name, 1_000);
      return { kind, target: name, from, to: monoNow() };
    }
    case 'freeze': {
      const name = target();
      await untilClaimPhase(ctx.fleet.skewOf(name));
      ctx.fleet.freeze(name);
      await pause(2 * ctx.leaseMs);
      ctx.fleet.thaw(name);
      return { kind, target: name, from, to: monoNow() };
    }
    case 'server_restart':
      await ctx.server.restart();
      return { kind, from, to: monoNow() };
    case 'drop_connections':
      await ctx.server.dropConnections();
      return { kind, from, to: monoNow() };
    case 'failover': {
      if (!ctx.server.failover) throw new Error('failover: this backend is not an HA topology');
      const { killed, killedAt } = await ctx.server.failover();
      const promotedAt = monoNow();
      await ctx.server.heal?.();
      return { kind, target: killed, from, to: monoNow(), killedAt, promotedAt };
    }
  }
}

/**
 * Runs the plan: waits for each fault's time (measured from `startMono`), injects it, records
 * its window. Faults never overlap: a late fault starts when the previous one is done.
 */
export async function runFaults(
  plan: readonly PlannedFault[],
  startMono: number,
  ctx: Parameters<typeof injectFault>[1],
  log: (line: string) => void,
): Promise<FaultWindow[]> {
  const windows: FaultWindow[] = [];
  for (const fault of plan) {
    await pause(startMono + fault.atSeconds * 1000 - monoNow());
    const window = await injectFault(fault.kind, ctx);
    windows.push(window);
    log(
      `  fault ${window.kind}${window.target ? ` ${window.target}` : ''} at +${((window.from - startMono) / 1000).toFixed(1)} s, ${((window.to - window.from) / 1000).toFixed(1)} s`,
    );
  }
  return windows;
}
