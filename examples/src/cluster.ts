// pnpm --filter @fleetcron/examples cluster [--workers 3] [--seconds 10] [--every 1000] [--file PATH]
// PM2-style cluster mode with node:cluster: the primary forks workers, every worker runs the same
// Scheduler on one SQLite file (SqliteLock + SqliteStore), and each fire runs in exactly one
// worker. No server. Workers report runs to the primary, which prints the summary line.
import cluster from 'node:cluster';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SqliteStore } from '@fleetcron/store-sqlite';
import { END_SLACK_MS, skippedFires, summaryLine, tallyFires, time } from './fleet-demo.js';
import { type RunReport, startSqliteInstance } from './sqlite-instance.js';

/** Messages from a worker to the primary. */
type WorkerMessage = { ready: true } | { run: RunReport };

if (cluster.isPrimary) await primary();
else await worker();

async function primary(): Promise<void> {
  const { values } = parseArgs({
    options: {
      workers: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '10' },
      every: { type: 'string', default: '1000' },
      file: { type: 'string' },
    },
  });
  const count = Number(values.workers);
  const seconds = Number(values.seconds);
  const everyMs = Number(values.every);
  if (!(Number.isInteger(count) && count > 0) || !(seconds > 0) || !(everyMs > 0)) {
    console.error('--workers must be a positive integer; --seconds and --every positive numbers');
    process.exitCode = 2;
    return;
  }
  const dir = values.file ? null : mkdtempSync(join(tmpdir(), 'fleetcron-cluster-'));
  const file = values.file ?? join(dir as string, 'fleet.db');
  // In PM2 cluster mode, set this in the ecosystem file's env instead; workers read it.
  process.env.FLEETCRON_SQLITE_FILE = file;
  process.env.FLEETCRON_EVERY_MS = String(everyMs);

  const runs = new Map<number, string[]>();
  const workers = Array.from({ length: count }, () => cluster.fork());
  await Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((resolve, reject) => {
          w.on('message', (message: WorkerMessage) => {
            if ('ready' in message) resolve();
            else {
              const { run } = message;
              runs.set(run.fireAt, [...(runs.get(run.fireAt) ?? []), run.instanceId]);
              console.log(
                `fire ${time(run.fireAt)}  won by ${run.instanceId} (pid ${run.pid}) token ${run.token}`,
              );
            }
          });
          w.once('exit', (code) =>
            reject(new Error(`worker ${w.id} exited (${code}) before it was ready`)),
          );
        }),
    ),
  );
  console.log(`${count} cluster workers on ${file}; job every ${everyMs} ms for ${seconds} s`);
  const from = Date.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const to = Date.now() - END_SLACK_MS;
  // disconnect() lets each worker stop its scheduler cleanly, then exit by itself
  await Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((resolve) => {
          w.once('exit', () => resolve());
          w.disconnect();
        }),
    ),
  );
  const store = new SqliteStore(file);
  const skipped = await skippedFires(store).finally(() => store.close());
  const claims = { won: 0, lost: 0, busy: 0, failed: 0 };
  const result = tallyFires({ from, to, everyMs, runs, skipped, claims });
  console.log(summaryLine(result));
  if (result.duplicates > 0 || result.missed > 0 || result.fires === 0) process.exitCode = 1;
  if (dir) rmSync(dir, { recursive: true, force: true });
}

async function worker(): Promise<void> {
  const file = process.env.FLEETCRON_SQLITE_FILE;
  if (!file) throw new Error('FLEETCRON_SQLITE_FILE is not set');
  const send = (message: WorkerMessage) => {
    if (process.connected) process.send?.(message);
  };
  const instance = await startSqliteInstance({
    file,
    instanceId: `worker-${cluster.worker?.id}`,
    everyMs: Number(process.env.FLEETCRON_EVERY_MS ?? 1000),
    onRun: (run) => send({ run }),
  });
  send({ ready: true });
  // The primary disconnects (or PM2 sends SIGINT on reload): stop claiming, drain, close.
  const stop = () => void instance.stop();
  process.once('disconnect', stop);
  process.once('SIGINT', stop);
}
