// A separate OS process that creates schedules `w0`, `w1`, … on a SQLite file through its own
// SqliteStore, printing each id once its write answered, until it is killed.
// Usage: node --import tsx --conditions=source schedule-writer-process.ts <file>
import { SqliteStore } from '../src/index.js';

const store = new SqliteStore(process.argv[2]!);
for (let i = 0; ; i++) {
  await store.createSchedule(
    `w${i}`,
    {
      handler: 'report',
      trigger: { kind: 'every', ms: 60_000, anchor: 0 },
      data: i,
      enabled: true,
      options: {},
    },
    { by: 'writer-process' },
  );
  process.stdout.write(`w${i}\n`);
}
