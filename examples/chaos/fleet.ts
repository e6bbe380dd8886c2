import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@fleetcron/testkit';
import type { ChaosTargetName } from './backends.js';
import { readLedgers } from './ledger.js';

/** The libfaketime preload library (Debian package `faketime`). */
export const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/** One member of the fleet: a name and how far its wall clock is off the real one. */
export interface InstanceSpec {
  name: string;
  skewMs: number;
}

/** The four instances: clocks −2 s, 0, +1.5 s and +3 s. */
export const CHAOS_FLEET: readonly InstanceSpec[] = [
  { name: 'slow', skewMs: -2_000 },
  { name: 'exact', skewMs: 0 },
  { name: 'ahead', skewMs: 1_500 },
  { name: 'fast', skewMs: 3_000 },
];

const here = dirname(fileURLToPath(import.meta.url));
const INSTANCE_SCRIPT = join(here, 'instance.ts');
const EXAMPLES_DIR = dirname(here);

/** An exit the driver did not cause (a crash), with the end of the process's stderr. */
export interface UnexpectedExit {
  instance: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

interface Running {
  spec: InstanceSpec;
  instanceId: string;
  child: ChildProcess;
  exited: Promise<void>;
  /** Set before the driver kills or stops it, so its exit is not reported as a crash. */
  expectedExit: boolean;
  frozen: boolean;
}

/** Options of {@link ChaosFleet}. */
export interface ChaosFleetOptions {
  /** The backend or HA topology the instances connect to. */
  backend: ChaosTargetName;
  /** The server's address, passed to every instance. */
  address: string;
  /** Directory of the ledger files (one per process incarnation). */
  ledgerDir: string;
  /** Most time to wait for a process to boot or exit. Default 30 s. */
  timeoutMs?: number;
}

/**
 * The four instance processes, each started as `node --import tsx instance.ts` under
 * libfaketime with its own skew (`FAKETIME_DONT_FAKE_MONOTONIC=1`, so the monotonic clock stays
 * real and shared), and the process faults: SIGKILL + restart, SIGSTOP/SIGCONT, stop.
 */
export class ChaosFleet {
  /** Exits the driver did not cause. */
  readonly unexpectedExits: UnexpectedExit[] = [];
  private readonly running = new Map<string, Running>();
  private readonly incarnations = new Map<string, number>();
  private readonly timeoutMs: number;

  constructor(private readonly options: ChaosFleetOptions) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    if (!existsSync(FAKETIME_LIB)) {
      throw new Error(
        `libfaketime is missing (${FAKETIME_LIB}): install it with \`apt-get install -y faketime\`.`,
      );
    }
  }

  /**
   * Starts an instance process (a new incarnation with a new id) and waits until it is `ready`
   * (its client connected and its scheduler started).
   */
  async start(spec: InstanceSpec): Promise<string> {
    const n = (this.incarnations.get(spec.name) ?? 0) + 1;
    this.incarnations.set(spec.name, n);
    const instanceId = `${spec.name}#${n}`;
    const seconds = spec.skewMs / 1000;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--conditions=source', INSTANCE_SCRIPT],
      {
        cwd: EXAMPLES_DIR,
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        env: {
          ...process.env,
          LD_PRELOAD: FAKETIME_LIB,
          FAKETIME: `${seconds >= 0 ? '+' : ''}${seconds}s`,
          FAKETIME_DONT_FAKE_MONOTONIC: '1',
          FLEETCRON_CHAOS_BACKEND: this.options.backend,
          FLEETCRON_CHAOS_ADDRESS: this.options.address,
          FLEETCRON_CHAOS_LEDGER: join(this.options.ledgerDir, `${spec.name}-${n}.jsonl`),
          FLEETCRON_CHAOS_INSTANCE: instanceId,
          FLEETCRON_CHAOS_SKEW_MS: String(spec.skewMs),
        },
      },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4_000);
    });
    const entry: Running = {
      spec,
      instanceId,
      child,
      expectedExit: false,
      frozen: false,
      exited: new Promise((resolve) => {
        child.on('exit', (code, signal) => {
          if (!entry.expectedExit) {
            this.unexpectedExits.push({ instance: instanceId, code, signal, stderr });
          }
          resolve();
        });
      }),
    };
    child.on('error', () => {}); // reported through 'exit'
    this.running.set(spec.name, entry);
    await waitFor(
      () =>
        child.exitCode !== null ||
        readLedgers(this.options.ledgerDir).lines.some(
          (l) => l.kind === 'ready' && l.instance === instanceId,
        ),
      {
        timeoutMs: this.timeoutMs,
        intervalMs: 100,
        message: `instance ${instanceId} ready (booted, connected, scheduler started)`,
      },
    );
    if (child.exitCode !== null) {
      throw new Error(`instance ${instanceId} exited at start (code ${child.exitCode}): ${stderr}`);
    }
    return instanceId;
  }

  /** The clock skew of a running instance, ms. */
  skewOf(name: string): number {
    return this.get(name).spec.skewMs;
  }

  /** Names of the instances currently running. */
  names(): string[] {
    return [...this.running.keys()];
  }

  /** SIGKILLs an instance and waits until it is gone. */
  async kill(name: string): Promise<void> {
    const entry = this.get(name);
    entry.expectedExit = true;
    entry.child.kill('SIGKILL');
    await entry.exited;
    this.running.delete(name);
  }

  /** SIGKILLs an instance, waits `downMs`, then starts a new incarnation. Returns the new id. */
  async killAndRestart(name: string, downMs: number): Promise<string> {
    const { spec } = this.get(name);
    await this.kill(name);
    await new Promise((resolve) => setTimeout(resolve, downMs));
    return this.start(spec);
  }

  /** SIGSTOPs an instance (`frozen` until {@link thaw}). */
  freeze(name: string): void {
    const entry = this.get(name);
    entry.frozen = true;
    entry.child.kill('SIGSTOP');
  }

  /** SIGCONTs a frozen instance. */
  thaw(name: string): void {
    const entry = this.get(name);
    entry.child.kill('SIGCONT');
    entry.frozen = false;
  }

  /**
   * Stops every instance: SIGCONT, then SIGTERM (the instance stops its scheduler and exits),
   * then SIGKILL for any process still there after the timeout.
   */
  async stopAll(): Promise<void> {
    const entries = [...this.running.values()];
    for (const entry of entries) {
      entry.expectedExit = true;
      if (entry.frozen) entry.child.kill('SIGCONT');
      entry.child.kill('SIGTERM');
    }
    const timer = new Promise((resolve) => setTimeout(resolve, this.timeoutMs).unref());
    await Promise.race([Promise.all(entries.map((e) => e.exited)), timer]);
    for (const entry of entries) {
      if (entry.child.exitCode === null && entry.child.signalCode === null) {
        entry.child.kill('SIGKILL');
        await entry.exited;
      }
    }
    this.running.clear();
  }

  private get(name: string): Running {
    const entry = this.running.get(name);
    if (!entry) throw new Error(`no running chaos instance named ${name}`);
    return entry;
  }
}
