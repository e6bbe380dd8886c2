// A separate OS process that takes the run requests of one job on a SQLite file through its own
// SqliteStore and prints them as one JSON line (`{"taken":[…]}`), then stays until killed. With
// `decideFireAt`, it then sends the decision of the first request and blocks its main thread for
// good (printing `{"sent":true}` first): the store's worker thread commits the decision, but its
// reply is never read, and the test SIGKILLs the process (a decision whose reply is lost).
// Usage: node --import tsx --conditions=source run-request-taker-process.ts '<json arguments>'
import { SqliteStore } from '../src/index.js';

const args = JSON.parse(process.argv[2]!) as {
  file: string;
  job: string;
  instanceId: string;
  leaseMs: number;
  decideFireAt?: number;
};
const store = new SqliteStore(args.file);
const taken = await store.takeRunRequests([args.job], args.instanceId, { leaseMs: args.leaseMs });
process.stdout.write(`${JSON.stringify({ taken })}\n`);
const first = taken[0];
if (args.decideFireAt !== undefined && first) {
  const decision = { fireAt: args.decideFireAt, instanceId: args.instanceId };
  void store.decideRunRequest(first.id, first.takeId, decision);
  // A macrotask runs after the microtasks that post the request to the worker thread.
  setImmediate(() => {
    process.stdout.write(`${JSON.stringify({ sent: true })}\n`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  });
} else {
  setInterval(() => {}, 60_000);
}
