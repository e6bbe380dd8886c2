import { FleetcronError } from '../errors.js';

/**
 * `AUDIT_NOT_KEPT`: the store keeps no audit log (it has no `listAudit`), so there is no record
 * of who paused, ran or changed what. Every built-in store of this version keeps one.
 */
export class AuditNotKeptError extends FleetcronError {
  constructor(backend: string) {
    super(
      'AUDIT_NOT_KEPT',
      `the ${backend} store keeps no audit log (no listAudit): its pauses, run requests and schedule changes are not recorded; use a built-in store (MemoryStore, PostgresStore, RedisStore, EtcdStore, SqliteStore) of this version, or implement listAudit and record each mutation with it.`,
      { field: 'store' },
    );
  }
}
