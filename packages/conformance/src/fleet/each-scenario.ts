import { expect } from 'vitest';
import type { FleetScenario } from '../types.js';
import type { ChildJob } from './child-config.js';
import type { InstanceChild } from './child-process.js';
import {
  allExecutions,
  at,
  type ControlSetup,
  formatExecutions,
  withControlSetup,
} from './control-harness.js';
import type { LedgerEntry } from './ledger.js';
import { startLines, startModeChildren, stopAll, waitForStarts } from './mode-fleet.js';
import { openRuns } from './shard-judge.js';

/** Interval of the broadcast job, ms. */
const EACH_EVERY_MS = 500;
/**
 * The broadcast job: every live instance runs each fire once. Overlap `'allow'`: an instance's
 * late first claim (a lock's first call may wait, e.g. for EtcdLock's first clock measurement)
 * must not make its next fires `busy`.
 */
const EACH_JOB: ChildJob = {
  ...{ name: 'each-job', everyMs: EACH_EVERY_MS, workMs: 50 },
  ...{ shards: 'each', overlap: 'allow' },
};
/** Fires the fleet runs between two changes of its membership. */
const FIRES_PER_PHASE = 4;
/**
 * How long an instance must be listed in the registry before a fire, and must stay up after it,
 * for that fire to be required of it, ms (joins and leaves are not instantaneous).
 */
const MEMBERSHIP_MARGIN_MS = 1_000;
/** How often the test process reads the registry, ms. */
const REGISTRY_POLL_MS = 100;

/** One read of the registry: when, and which instances it listed. */
interface RegistryRead {
  at: number;
  ids: Set<string>;
}

/** Reads the registry every {@link REGISTRY_POLL_MS} until the returned function is called. */
function watchRegistry(setup: ControlSetup, reads: RegistryRead[]): () => void {
  const timer = setInterval(() => {
    const now = Date.now();
    setup.store.instances().then(
      (live) => reads.push({ at: now, ids: new Set(live.map((i) => i.instanceId)) }),
      () => {},
    );
  }, REGISTRY_POLL_MS);
  return () => clearInterval(timer);
}

/**
 * The instances a fire at `t` must run on: listed by every registry read in the margin before
 * it (at least one), and not stopped or killed before the margin after it.
 */
function requiredAt(t: number, reads: RegistryRead[], leftAt: Map<string, number>): string[] {
  const window = reads.filter((r) => r.at >= t - MEMBERSHIP_MARGIN_MS && r.at <= t);
  if (window.length === 0) return [];
  const ids = [...window[0]!.ids].filter((id) => window.every((r) => r.ids.has(id)));
  return ids.filter(
    (id) => (leftAt.get(id) ?? Number.POSITIVE_INFINITY) > t + MEMBERSHIP_MARGIN_MS,
  );
}

/** Waits for {@link FIRES_PER_PHASE} fires after now, on each of `ids`. */
async function phase(setup: ControlSetup, ids: string[]): Promise<void> {
  const from = Date.now();
  await waitForStarts(setup, EACH_JOB.name, from, FIRES_PER_PHASE * ids.length, 30_000);
}

/**
 * `shards: 'each'` with real processes: three instances run a broadcast job; a fourth joins,
 * one is stopped, one is SIGKILLed. Judged from the ledger and the registry as the test process
 * reads it: every fire runs once on every instance live at it (listed by the registry, not yet
 * gone), never twice on one instance, and every run is in the history, as an 'each' run (the
 * killed instance's run cut by the kill may keep its `running` row).
 */
export const eachJoinAndLeave: FleetScenario = {
  title:
    "shards: 'each' on 3 instances, one joins, one stops, one is SIGKILLed: every fire runs once on every live instance, each run recorded",
  timeoutMs: 120_000,
  run: (options) =>
    withControlSetup(options, async (setup) => {
      const { tag, scale, ledger, store } = setup;
      const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((x) => `each-${x}-${tag}`) as [
        string,
        string,
        string,
        string,
      ];
      const children = new Map<string, InstanceChild>();
      const started = await startModeChildren(setup, [a, b, c], [EACH_JOB], { startOnGo: true });
      for (const [i, child] of started.entries()) children.set([a, b, c][i]!, child);
      const reads: RegistryRead[] = [];
      const leftAt = new Map<string, number>();
      const stopWatching = watchRegistry(setup, reads);
      let from = 0;
      let endAt = 0;
      try {
        await Promise.all(started.map((child) => child.go(30_000 * scale)));
        from = Date.now();
        await phase(setup, [a, b, c]);
        const [joiner] = await startModeChildren(setup, [d], [EACH_JOB]);
        children.set(d, joiner!);
        await phase(setup, [a, b, c, d]);
        leftAt.set(c, Date.now());
        expect(await children.get(c)!.stop(20_000 * scale), `${c} stops cleanly`).toBe(0);
        await phase(setup, [a, b, d]);
        leftAt.set(b, Date.now());
        await children.get(b)!.kill();
        await phase(setup, [a, d]);
        endAt = Date.now();
      } finally {
        stopWatching();
        const gone = [...children].filter(([id]) => leftAt.has(id)).map(([, child]) => child);
        const live = [...children].filter(([id]) => !leftAt.has(id)).map(([, child]) => child);
        await stopAll(live, gone, scale);
      }

      const entries = ledger.read();
      const starts = startLines(entries, EACH_JOB.name);
      const byRun = new Map<string, LedgerEntry[]>();
      for (const s of starts) {
        const key = `${s.instance} ${s.fireAt}`;
        byRun.set(key, [...(byRun.get(key) ?? []), s]);
      }
      const twice = [...byRun].filter(([, runs]) => runs.length > 1).map(([key]) => key);
      expect(twice, 'fires that ran twice on one instance').toEqual([]);

      const missing: string[] = [];
      let required = 0;
      const first = Math.ceil((from + MEMBERSHIP_MARGIN_MS) / EACH_EVERY_MS) * EACH_EVERY_MS;
      for (let t = first; t <= endAt - MEMBERSHIP_MARGIN_MS; t += EACH_EVERY_MS) {
        for (const id of requiredAt(t, reads, leftAt)) {
          required++;
          if (!byRun.has(`${id} ${t}`)) missing.push(`${id} fire ${at(t)}`);
        }
      }
      expect(missing, `runs missing on instances live at the fire (of ${required})`).toEqual([]);
      const notEach = starts.filter((s) => s.shard?.each !== true).map((s) => s.instance);
      expect(notEach, 'runs whose ctx.shard does not say each: true').toEqual([]);
      for (const id of [a, b, c, d]) {
        const fires = new Set(
          [...byRun.keys()].filter((k) => k.startsWith(`${id} `)).map((k) => k.split(' ')[1]),
        );
        expect(fires.size, `fires run on ${id}`).toBeGreaterThanOrEqual(FIRES_PER_PHASE);
      }

      const rows = await allExecutions(store, EACH_JOB.name);
      const killedOpen = new Set(openRuns(entries, b).map((e) => `${b} ${e.fireAt}`));
      // the SIGKILL may also land after a run's job ended but before its outcome was written:
      // the killed instance's last run before the kill may keep its `running` row
      const killedAt = leftAt.get(b) ?? Number.POSITIVE_INFINITY;
      const cutByKill = (key: string) =>
        key.startsWith(`${b} `) &&
        Number(key.split(' ')[1]) > killedAt - EACH_EVERY_MS &&
        rows.some((r) => `${r.instanceId} ${r.fireAt}` === key && r.status === 'running');
      const unrecorded = [...byRun.keys()].filter((key) => {
        if (killedOpen.has(key) || cutByKill(key)) return false;
        return !rows.some(
          (r) =>
            `${r.instanceId} ${r.fireAt}` === key &&
            r.shard?.each === true &&
            r.status === 'succeeded',
        );
      });
      expect(
        unrecorded,
        `runs without a succeeded 'each' row in the history (their rows: ${rows
          .filter((r) => unrecorded.includes(`${r.instanceId} ${r.fireAt}`))
          .map((r) => `${r.status}: ${r.error ?? ''}`)
          .join('; ')}):\n${formatExecutions(rows)}`,
      ).toEqual([]);
    }),
};
