import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Request, RequestEnvelope, ResponseEnvelope, Responses } from './protocol.js';

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));

/**
 * Node arguments that load the TypeScript worker: the parent's own (`pnpm bench` runs under
 * tsx, which they carry), or tsx and the `source` condition where the parent has no tsx loader
 * (a vitest worker).
 */
function workerExecArgv(): string[] {
  if (process.execArgv.some((arg) => arg.includes('tsx'))) return [...process.execArgv];
  const tsx = createRequire(import.meta.url).resolve('tsx');
  return [...process.execArgv, '--import', tsx, '--conditions=source'];
}

/** One worker process and its request/answer channel. */
export class WorkerProcess {
  private readonly child: ChildProcess;
  private nextId = 1;
  private readonly waiting = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  private exited: Error | null = null;

  constructor(
    readonly name: string,
    extraArgs: string[] = [],
  ) {
    this.child = fork(WORKER, [], {
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: [...workerExecArgv(), ...extraArgs],
    });
    this.child.on('message', (message: ResponseEnvelope) => {
      const waiter = this.waiting.get(message.id);
      if (!waiter) return;
      this.waiting.delete(message.id);
      if (message.ok) waiter.resolve(message.value);
      else waiter.reject(new Error(`worker ${this.name}: ${message.error}`));
    });
    this.child.on('exit', (code, signal) => {
      this.exited = new Error(`worker ${this.name} exited (code ${code}, signal ${signal})`);
      for (const waiter of this.waiting.values()) waiter.reject(this.exited);
      this.waiting.clear();
    });
    this.child.on('error', () => {});
  }

  /** Sends `request` and resolves with the worker's answer. */
  request<R extends Request>(request: R): Promise<Responses[R['type']]> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      const envelope: RequestEnvelope = { id, request };
      this.child.send(envelope, (error) => {
        if (error) {
          this.waiting.delete(id);
          reject(error);
        }
      });
    });
  }

  /**
   * Kills the worker with `signal` (the restart scenario's outage: SIGKILL, nothing flushed or
   * released) and waits for it to exit.
   */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill(signal);
    await exited;
  }

  /** Ends the worker (it closes its connections on disconnect) and waits for it to exit. */
  async close(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.disconnect();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/** Splits `n` instances over `workers` workers as evenly as possible: global indices per worker. */
export function spread(n: number, workers: number): number[][] {
  const groups: number[][] = Array.from({ length: Math.max(1, Math.min(workers, n)) }, () => []);
  for (let i = 0; i < n; i++) groups[i % groups.length]?.push(i);
  return groups;
}
