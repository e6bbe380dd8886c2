/**
 * `pnpm demo` on SQLite: the three instances are real OS processes (demo-instance.ts) sharing one
 * SQLite file, with no server. The parent prints each run as the children report it, stops them
 * with SIGTERM, and counts the fires exactly as the in-process demo does.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteStore } from '@fleetcron/store-sqlite';
import {
  DEFAULT_INSTANCES,
  type DemoInstance,
  END_SLACK_MS,
  type FleetDemoResult,
  skippedFires,
  tallyFires,
  time,
} from './fleet-demo.js';
import type { ClaimCounts, RunReport } from './sqlite-instance.js';

const CHILD = fileURLToPath(new URL('./demo-instance.ts', import.meta.url));
/** How long a child may take to stop after SIGTERM before it is killed (and reported). */
const STOP_TIMEOUT_MS = 15_000;

/** Options of {@link runProcessFleet}. */
export interface ProcessFleetOptions {
  seconds: number;
  everyMs?: number;
  instances?: readonly DemoInstance[];
  /** The SQLite file. Default: a new file in a temporary directory, removed afterwards. */
  file?: string;
  print?: (line: string) => void;
  signal?: AbortSignal;
}

interface Child {
  instance: DemoInstance;
  process: ChildProcess;
  pid: number | undefined;
  ready: Promise<void>;
  claims: ClaimCounts | null;
  exited: Promise<number | null>;
}

function startChild(
  file: string,
  instance: DemoInstance,
  everyMs: number,
  onRun: (run: RunReport) => void,
): Child {
  const args = { file, instanceId: instance.id, offsetMs: instance.offsetMs, everyMs };
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=source', CHILD, JSON.stringify(args)],
    { stdio: ['ignore', 'pipe', 'inherit'], detached: true }, // own group: Ctrl-C goes to the parent only
  );
  const child: Child = {
    instance,
    process: proc,
    pid: proc.pid,
    claims: null,
    ready: Promise.resolve(),
    exited: new Promise((resolve) => proc.once('exit', (code) => resolve(code))),
  };
  child.ready = new Promise<void>((resolve, reject) => {
    let buffer = '';
    proc.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        const message = JSON.parse(line) as {
          ready?: number;
          run?: RunReport;
          claims?: ClaimCounts;
        };
        if (message.ready) resolve();
        if (message.run) onRun(message.run);
        if (message.claims) child.claims = message.claims;
      }
    });
    void child.exited.then((code) =>
      reject(new Error(`instance ${instance.id} exited (${code}) before it was ready`)),
    );
  });
  return child;
}

/** Runs the fleet as OS processes on one SQLite file and counts what happened. */
export async function runProcessFleet(options: ProcessFleetOptions): Promise<FleetDemoResult> {
  const everyMs = options.everyMs ?? 2000;
  const instances = options.instances ?? DEFAULT_INSTANCES;
  const print = options.print ?? ((line: string) => console.log(line));
  const dir = options.file ? null : mkdtempSync(join(tmpdir(), 'fleetcron-demo-'));
  const file = options.file ?? join(dir as string, 'fleet.db');
  const runs = new Map<number, string[]>();
  const onRun = (run: RunReport) => {
    runs.set(run.fireAt, [...(runs.get(run.fireAt) ?? []), run.instanceId]);
    print(
      `fire ${time(run.fireAt)}  won by ${run.instanceId.padEnd(8)} (pid ${run.pid}) token ${String(run.token).padStart(3)}  (its clock read ${time(run.clockRead)})`,
    );
  };
  const children = instances.map((instance) => startChild(file, instance, everyMs, onRun));
  try {
    await Promise.all(children.map((c) => c.ready));
    print(
      `${instances.length} processes (${children.map((c) => `${c.instance.id} ${c.instance.offsetMs >= 0 ? '+' : ''}${c.instance.offsetMs} ms pid ${c.pid}`).join(', ')}) on one SQLite file, no server (${file}); job every ${everyMs} ms for ${options.seconds} s`,
    );
    const from = Date.now();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, options.seconds * 1000);
      options.signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        print('interrupted: stopping the fleet');
        resolve();
      });
    });
    const to = Date.now() - END_SLACK_MS;
    await stopAll(children, print);
    const store = new SqliteStore(file);
    const skipped = await skippedFires(store).finally(() => store.close());
    const claims = { won: 0, lost: 0, busy: 0, failed: 0 };
    for (const c of children) {
      for (const k of Object.keys(claims) as (keyof ClaimCounts)[]) claims[k] += c.claims?.[k] ?? 0;
    }
    const result = tallyFires({ from, to, everyMs, runs, skipped, claims });
    print(
      `claims: won ${claims.won}, lost ${claims.lost}, busy ${claims.busy}, failed ${claims.failed}; skipped by policy ${result.skipped}`,
    );
    return result;
  } finally {
    for (const c of children) if (c.process.exitCode === null) c.process.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/** SIGTERMs every child and waits for its clean exit; one that hangs is killed and reported. */
async function stopAll(children: Child[], print: (line: string) => void): Promise<void> {
  await Promise.all(
    children.map(async (c) => {
      c.process.kill('SIGTERM');
      const timer = setTimeout(() => {
        print(`instance ${c.instance.id} did not exit ${STOP_TIMEOUT_MS} ms after SIGTERM: killed`);
        c.process.kill('SIGKILL');
      }, STOP_TIMEOUT_MS);
      const code = await c.exited;
      clearTimeout(timer);
      if (code !== 0) print(`instance ${c.instance.id} exited with ${code}`);
    }),
  );
}
