import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Request, RequestEnvelope, ResponseEnvelope, Responses } from './protocol.js';

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));

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
    // execArgv is inherited, so the worker runs under the same tsx loader and conditions.
    this.child = fork(WORKER, [], {
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: [...process.execArgv, ...extraArgs],
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
