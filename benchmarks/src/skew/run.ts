/**
 * The skew scenario: 4 instance processes, one with its wall clock 3 s fast and one 2 s slow
 * (libfaketime), `jobs` one-shot jobs due at the same instant. Lateness of every run on the REAL
 * clock, per backend, next to the same fire with no skew; and each instance's estimate of its
 * offset from the backend's clock.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ClockOffset } from '@fleetcron/core';
import type { BackendName, StartedBackend } from '../backends/types.js';
import { type Summary, summarize } from '../stats.js';
import type { SkewGo, SkewInstanceResult, SkewPrepare } from './protocol.js';

/** The backends whose locks the scenario measures (SQLite: one host clock, no server to skew against). */
export const SKEW_BACKENDS: readonly BackendName[] = ['postgres', 'redis', 'etcd'];

/** Wall-clock skews of the 4 instances, ms. */
export const SKEWS = [0, 0, 3000, -2000] as const;

/** Where Debian's `faketime` package puts the preload library. */
export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

const INSTANCE = fileURLToPath(new URL('./instance.ts', import.meta.url));

/** One fire of the skew scenario on one backend, skewed or not. */
export interface SkewRow {
  backend: string;
  /** `skewed`: clocks 0, 0, +3 s, −2 s; `unskewed`: all 0 (the baseline). */
  mode: 'skewed' | 'unskewed';
  jobs: number;
  ran: number;
  duplicates: number;
  missed: number;
  /** Lateness on the real clock (run start − fire time), ms. */
  lateness: Summary;
  /** Runs per instance, and each instance's skew and clock estimate. */
  instances: {
    skewMs: number;
    runs: number;
    early: number;
    estimate: Pick<ClockOffset, 'offsetMs' | 'rttMs' | 'boundMs'> | null;
  }[];
  failure: string | null;
}

/** One instance process (under libfaketime when skewed) and its request channel. */
class SkewProcess {
  private readonly child: ChildProcess;
  private nextId = 1;
  private readonly waiting = new Map<
    number,
    (answer: { ok: boolean; value?: unknown; error?: string }) => void
  >();
  private exited: Error | null = null;

  constructor(skewMs: number) {
    const env = { ...process.env };
    if (skewMs !== 0) {
      env.LD_PRELOAD = LIBFAKETIME;
      env.FAKETIME = `${skewMs >= 0 ? '+' : ''}${skewMs / 1000}s`;
      env.FAKETIME_DONT_FAKE_MONOTONIC = '1';
    }
    this.child = fork(INSTANCE, [], {
      env,
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: process.execArgv,
    });
    this.child.on('message', (m: { id: number; ok: boolean; value?: unknown; error?: string }) => {
      this.waiting.get(m.id)?.(m);
      this.waiting.delete(m.id);
    });
    this.child.on('exit', (code, signal) => {
      this.exited = new Error(`skew instance exited (code ${code}, signal ${signal})`);
      for (const w of this.waiting.values()) w({ ok: false, error: this.exited.message });
      this.waiting.clear();
    });
    this.child.on('error', () => {});
  }

  request<T>(request: SkewPrepare | SkewGo): Promise<T> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (m) => (m.ok ? resolve(m.value as T) : reject(new Error(m.error))));
      this.child.send({ id, request });
    });
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.disconnect();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/** Runs one fire of `jobs` jobs on 4 instance processes with `skews`; accounts the runs. */
export async function runSkewFire(
  backend: StartedBackend,
  mode: SkewRow['mode'],
  settings: { jobs: number; deadlineMs: number; leadMs: number; tag: string },
): Promise<SkewRow> {
  const skews = mode === 'skewed' ? SKEWS : SKEWS.map(() => 0);
  const base: SkewRow = {
    ...{ backend: backend.name, mode, jobs: settings.jobs, ran: 0, duplicates: 0 },
    ...{ missed: settings.jobs, lateness: summarize([]), instances: [], failure: null },
  };
  if (mode === 'skewed' && !existsSync(LIBFAKETIME)) {
    return {
      ...base,
      failure: `libfaketime not found at ${LIBFAKETIME}: apt-get install faketime`,
    };
  }
  const processes = skews.map((skewMs) => new SkewProcess(skewMs));
  try {
    await Promise.all(
      processes.map((p, index) =>
        p.request({
          type: 'skew-prepare',
          backend: backend.name,
          connection: backend.connection,
          index,
          skewMs: skews[index]!,
        }),
      ),
    );
    // time for each scheduler to open its lock and estimate the backend's clock (a job every
    // second); the tsx start-up is behind us (an instance answers 'skew-prepare' once loaded)
    const fireAt = Math.ceil((Date.now() + settings.leadMs) / 1000) * 1000;
    const prefix = `skew-${mode}-${settings.tag}`;
    const results = await Promise.all(
      processes.map((p) =>
        p.request<SkewInstanceResult>({
          type: 'skew-go',
          jobs: settings.jobs,
          fireAt,
          prefix,
          deadlineMs: settings.deadlineMs,
        }),
      ),
    );
    return account(base, results);
  } catch (error) {
    return { ...base, failure: (error as Error).message.split('\n')[0] ?? 'unknown error' };
  } finally {
    await Promise.allSettled(processes.map((p) => p.close()));
  }
}

function account(base: SkewRow, results: SkewInstanceResult[]): SkewRow {
  const count = new Map<number, number>();
  const lateness: number[] = [];
  for (const r of results) {
    for (const run of r.runs) {
      count.set(run.job, (count.get(run.job) ?? 0) + 1);
      lateness.push(run.latenessMs);
    }
  }
  let duplicates = 0;
  for (const n of count.values()) if (n > 1) duplicates += n - 1;
  return {
    ...base,
    ran: count.size,
    duplicates,
    missed: base.jobs - count.size,
    lateness: summarize(lateness),
    instances: results.map((r) => ({
      skewMs: r.skewMs,
      runs: r.runs.length,
      early: r.claims.early,
      estimate: r.estimate
        ? { offsetMs: r.estimate.offsetMs, rttMs: r.estimate.rttMs, boundMs: r.estimate.boundMs }
        : null,
    })),
  };
}
