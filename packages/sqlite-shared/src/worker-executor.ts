import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { BackendUnavailableError, InvalidOptionError } from '@fleetcron/core';
import { WAL_MODE_ERROR } from './connection.js';
import { DRIVER_LOAD_ERROR } from './driver.js';
import { SqliteDriverError, unavailable } from './errors.js';
import type { SqliteExecutor } from './executor.js';
import type {
  ConnectionSettings,
  WorkerFailure,
  WorkerReady,
  WorkerReply,
  WorkerSetup,
} from './protocol.js';

/** Requests that may wait in one worker's queue with an `AbortSignal` at the same time. */
const ABORT_CELLS = 4096;

/** Where a worker finds its operation set. */
export interface OperationsModule {
  /** URL of the module (from `import.meta.url` of the adapter). */
  url: string;
  /** Name of its export holding the `SqliteOperations`. */
  exportName: string;
}

interface Pending {
  op: string;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  cell: number;
  onAbort: (() => void) | null;
  signal: AbortSignal | undefined;
}

/**
 * Runs operations in a worker thread that owns its own connection to `file`. The event loop of
 * the caller never waits on SQLite: a statement waiting for another process's write lock (up to
 * `busy_timeout`) blocks only the worker. The worker is unreferenced while idle, so it never
 * keeps the process alive; it is started on the first request and again after a crash.
 */
export class WorkerExecutor implements SqliteExecutor {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private readonly pending = new Map<number, Pending>();
  private readonly cells = new Int32Array(new SharedArrayBuffer(4 * ABORT_CELLS));
  private readonly freeCells: number[] = Array.from({ length: ABORT_CELLS }, (_, i) => i);
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly settings: ConnectionSettings,
    private readonly operations: OperationsModule,
    private readonly backend: string,
  ) {}

  async run<T>(op: string, args: unknown, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw BackendUnavailableError.notSent(this.backend, op);
    if (this.closed) throw closed(this.backend, op);
    const worker = await this.start(op);
    if (signal?.aborted) throw BackendUnavailableError.notSent(this.backend, op);
    return new Promise<T>((resolve, reject) => {
      const id = this.nextId++;
      const cell = signal ? (this.freeCells.pop() ?? -1) : -1;
      if (cell >= 0) Atomics.store(this.cells, cell, 0);
      const onAbort = cell >= 0 ? () => Atomics.store(this.cells, cell, 1) : null;
      if (onAbort) signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        op,
        resolve: resolve as (value: unknown) => void,
        reject,
        cell,
        onAbort,
        signal,
      });
      worker.ref();
      worker.postMessage({ id, op, args, cell });
    });
  }

  async open(): Promise<void> {
    if (this.closed) throw closed(this.backend, 'open');
    const worker = await this.start('open');
    if (this.pending.size === 0) worker.unref();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    await this.ready?.catch(() => {});
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref();
    worker.postMessage('close');
    const timer = setTimeout(() => void worker.terminate(), 5000 + this.settings.busyTimeoutMs);
    await exited;
    clearTimeout(timer);
    this.failAll((op) => closed(this.backend, op));
  }

  /** Starts the worker if none runs; resolves once its connection is open and migrated. */
  private async start(op: string): Promise<Worker> {
    if (!this.worker) {
      const worker = spawnWorker({
        file: this.file,
        settings: this.settings,
        operationsUrl: this.operations.url,
        operationsExport: this.operations.exportName,
        abortCells: this.cells.buffer as SharedArrayBuffer,
      });
      this.worker = worker;
      this.ready = new Promise<void>((resolve, reject) => {
        worker.once('message', (message: WorkerReady) => {
          if (message.ready) resolve();
          else reject(message.failure);
          worker.on('message', (reply: WorkerReply) => this.settle(reply));
        });
        worker.once('error', reject);
        worker.once('exit', (code) => reject(workerExited(this.backend, op, code)));
      });
      this.ready.catch(() => {});
      worker.on('error', (error) =>
        this.lost(worker, (op) => new BackendUnavailableError(this.backend, op, error)),
      );
      worker.on('exit', (code) => this.lost(worker, (op) => workerExited(this.backend, op, code)));
    }
    const worker = this.worker;
    try {
      await this.ready;
    } catch (failure) {
      this.lost(worker, (pendingOp) => unavailable(this.backend, pendingOp, failure));
      const { name, message } = failure as WorkerFailure;
      if (name === DRIVER_LOAD_ERROR) throw new SqliteDriverError(message);
      if (name === WAL_MODE_ERROR) throw new InvalidOptionError('database', message);
      throw unavailable(this.backend, op, failure as WorkerFailure);
    }
    return worker;
  }

  private settle(reply: WorkerReply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.forget(reply.id, pending);
    if (reply.ok) pending.resolve(reply.value);
    else if (reply.aborted)
      pending.reject(BackendUnavailableError.notSent(this.backend, pending.op));
    else pending.reject(unavailable(this.backend, pending.op, reply.failure));
  }

  private forget(id: number, pending: Pending): void {
    this.pending.delete(id);
    if (pending.onAbort) pending.signal?.removeEventListener('abort', pending.onAbort);
    if (pending.cell >= 0) this.freeCells.push(pending.cell);
    if (this.pending.size === 0) this.worker?.unref();
  }

  /** The worker crashed or exited: fail what it held; the next request starts a new one. */
  private lost(worker: Worker, failure: (op: string) => BackendUnavailableError): void {
    if (this.worker === worker) {
      this.worker = null;
      this.ready = null;
    }
    this.failAll(failure);
  }

  /** Rejects every request still waiting for an answer with `failure(itsOperation)`. */
  private failAll(failure: (op: string) => BackendUnavailableError): void {
    for (const [id, pending] of this.pending) {
      this.forget(id, pending);
      pending.reject(failure(pending.op));
    }
  }
}

function closed(backend: string, op: string): BackendUnavailableError {
  return BackendUnavailableError.because(
    backend,
    op,
    'the adapter was closed; create a new one (close() is final)',
  );
}

function workerExited(backend: string, op: string, code: number): BackendUnavailableError {
  return BackendUnavailableError.because(
    backend,
    op,
    `the SQLite worker thread exited (code ${code}); the next call starts a new one`,
  );
}

/**
 * Starts the worker entry next to this file: `worker.js` when built; from the TypeScript sources
 * (tests, `tsx`) `worker.ts`, loaded through tsx's loader, which the worker registers first, with
 * workspace packages resolved to their sources (the `source` export condition).
 */
function spawnWorker(setup: WorkerSetup): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(fromSource ? './worker.ts' : './worker.js', import.meta.url);
  if (!fromSource) return new Worker(entry, { workerData: setup });
  const tsx = dirname(createRequire(import.meta.url).resolve('tsx/package.json'));
  const api = pathToFileURL(join(tsx, 'dist/esm/api/index.mjs')).href;
  const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`;
  // `source`: the operation modules import `@fleetcron/sqlite-shared/statement-cache` from src/
  // too (the built files bundle it), as vitest resolves workspace packages.
  return new Worker(boot, { eval: true, workerData: setup, execArgv: ['--conditions=source'] });
}
