// One OS process of the multi-process tests: claims fires FIRST..FIRST+COUNT-1 of key KEY on FILE
// (in an order of its own), and prints one JSON line per answer to stdout, the append-only ledger
// of what it won. Usage: node --import tsx --conditions=source claimer-process.ts JSON
import { SqliteLock } from '../src/index.js';

interface Args {
  file: string;
  owner: string;
  key: string;
  first: number;
  count: number;
  leaseMs: number;
  /** `inline`: the lock runs on a `Database` on this thread and reports each call's duration. */
  mode: 'worker' | 'inline';
  busyTimeoutMs: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const source = args.mode === 'inline' ? new (await import('libsql')).default(args.file) : args.file;
const lock = new SqliteLock(source, { busyTimeoutMs: args.busyTimeoutMs, collectIntervalMs: 0 });
await lock.open();
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);

const order = Array.from({ length: args.count }, (_, i) => args.first + i);
for (let i = order.length - 1; i > 0; i--) {
  const j = Math.floor(Math.random() * (i + 1));
  [order[i], order[j]] = [order[j] as number, order[i] as number];
}
for (const fireAt of order) {
  const started = performance.now();
  try {
    const result = await lock.claim({
      key: args.key,
      fireAt,
      owner: args.owner,
      leaseMs: args.leaseMs,
      exclusive: false,
    });
    const ms = performance.now() - started;
    const token = result.status === 'won' ? result.lease.token : null;
    process.stdout.write(`${JSON.stringify({ fireAt, status: result.status, token, ms })}\n`);
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ fireAt, error: String(error) })}\n`);
  }
}
await lock.close();
if (typeof source !== 'string') source.close();
