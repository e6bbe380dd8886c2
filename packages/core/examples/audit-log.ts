// The audit-log guide's example (docs/guides/audit.md; checked by test/audit/guide-example.test.ts).
import { type AuditEntry, FleetClient, type Store } from '@fleetcron/core';

/** Pauses the export with a note, asks for a run, and reads the job's audit log back. */
export async function auditTheExport(store: Store): Promise<AuditEntry[]> {
  const fleet = new FleetClient({ store });
  await fleet.pause('export', { by: 'alice', note: 'INC-42: the warehouse is down' });
  await fleet.requestRun('export', { by: 'bob', note: 'rerun after the fix' });

  const page = await fleet.audit({ job: 'export', limit: 1 }); // newest first
  const older = await fleet.audit({ job: 'export', limit: 1, cursor: page.nextCursor });
  for (const e of [...page.entries, ...older.entries]) {
    console.log(new Date(e.at).toISOString(), e.by, e.action, e.note);
  }
  return [...page.entries, ...older.entries];
}
