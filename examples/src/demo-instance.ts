// One instance of `pnpm demo` on SQLite, as its own OS process (started by process-fleet.ts).
// argv[2]: JSON { file, instanceId, offsetMs, everyMs }. Writes one JSON line per event to
// stdout: { ready }, { run }, and on SIGTERM { claims } after a clean stop, then exits 0.
import { startSqliteInstance } from './sqlite-instance.js';

const args = JSON.parse(process.argv[2] ?? '{}') as {
  file: string;
  instanceId: string;
  offsetMs: number;
  everyMs: number;
};
const send = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
const instance = await startSqliteInstance({ ...args, onRun: (run) => send({ run }) });
send({ ready: process.pid });
process.once('SIGTERM', () => {
  void instance.stop().then(() => {
    send({ claims: instance.claims });
    process.exitCode = 0;
  });
});
process.once('SIGINT', () => {}); // Ctrl-C reaches the whole group: the parent decides when to stop
