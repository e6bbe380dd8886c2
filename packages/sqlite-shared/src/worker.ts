/**
 * Entry of the worker thread that owns one SQLite connection. It runs requests one at a time, so
 * a statement waiting on `busy_timeout` blocks this thread, never the caller's event loop.
 * Imports nothing from `@fleetcron/core` (it is loaded by URL, outside any bundler).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { retryBusy } from './busy-retry.js';
import { openConnection } from './connection.js';
import {
  type SqliteOperations,
  toFailure,
  type WorkerReady,
  type WorkerReply,
  type WorkerRequest,
  type WorkerSetup,
} from './protocol.js';

const setup = workerData as WorkerSetup;
const port = parentPort;
// The three plain errors below are bugs of an adapter's wiring, never user input: this module
// cannot import core's classes, so they cross to the caller as { name, message } and become a
// BackendUnavailableError there (failed closed).
if (!port) throw new Error('@fleetcron/sqlite-shared worker: must run in a worker thread');
const cells = new Int32Array(setup.abortCells);

async function start(): Promise<void> {
  let db: ReturnType<typeof openConnection>;
  let operations: SqliteOperations;
  try {
    const module = (await import(setup.operationsUrl)) as Record<string, SqliteOperations>;
    const found = module[setup.operationsExport];
    if (!found)
      throw new Error(
        `${setup.operationsUrl} has no export ${setup.operationsExport} (an adapter bug)`,
      );
    operations = found;
    db = openConnection(setup.file, setup.settings);
    const opened = db;
    retryBusy(() => operations.migrate(opened), setup.settings.busyTimeoutMs);
  } catch (error) {
    port?.postMessage({ ready: false, failure: toFailure(error) } satisfies WorkerReady);
    return;
  }
  port?.on('message', (request: WorkerRequest | 'close') => {
    if (request === 'close') {
      db.close();
      port.close();
      return;
    }
    port.postMessage(answer(db, operations, request, setup.settings.busyTimeoutMs));
  });
  port?.postMessage({ ready: true } satisfies WorkerReady);
}

function answer(
  db: ReturnType<typeof openConnection>,
  operations: SqliteOperations,
  request: WorkerRequest,
  busyTimeoutMs: number,
): WorkerReply {
  if (request.cell >= 0 && Atomics.load(cells, request.cell) === 1) {
    const failure = { name: 'AbortError', message: 'the caller gave up before it ran', code: null };
    return { id: request.id, ok: false, failure, aborted: true };
  }
  try {
    const operation = operations.ops[request.op];
    if (!operation) throw new Error(`the adapter has no operation ${request.op} (an adapter bug)`);
    const args = request.args as never;
    return { id: request.id, ok: true, value: retryBusy(() => operation(db, args), busyTimeoutMs) };
  } catch (error) {
    return { id: request.id, ok: false, failure: toFailure(error) };
  }
}

void start();
