// A process that takes the write lock of a SQLite file and holds it (a slow disk, a stuck or
// killed writer). Usage: node hold-write-lock.mjs FILE [write]. Prints "held" once it holds the
// lock; with "write" it also leaves an uncommitted claim record. It never commits: the test
// SIGKILLs it mid-transaction.
import Database from 'libsql';

const [file, mode] = process.argv.slice(2);
const db = new Database(file, { timeout: 30_000 });
db.pragma('journal_mode = WAL');
db.exec('BEGIN IMMEDIATE');
if (mode === 'write') {
  db.prepare(
    `INSERT OR REPLACE INTO fleetcron_claims (key, fire_at, owner, outcome, token, keep_until)
     VALUES ('uncommitted', 1, 'killed', 'won', 1, 9007199254740991)`,
  ).run();
}
process.stdout.write('held\n');
setInterval(() => {}, 60_000);
