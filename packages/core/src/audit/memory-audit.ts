import type { Clock } from '../clock.js';
import { InvalidOptionError } from '../errors.js';
import { auditFilter, encodeAuditCursor, resolveAuditRetention } from './audit-input.js';
import {
  AUDIT_PRUNE_BATCH,
  type AuditEntry,
  type AuditPage,
  type AuditQuery,
  type AuditRecord,
  type AuditRetention,
  type AuditStore,
} from './audit-log.js';

/**
 * The reference audit log in process memory, used by `MemoryStore`: `append` is synchronous, so
 * the store calls it in the same synchronous step as the mutation it records (nothing else runs
 * between them). Ids are a sequence (`1`, `2`, ...); pruning drops at most
 * {@link AUDIT_PRUNE_BATCH} oldest entries per append, beyond `maxEntries` or older than `maxAgeMs`.
 */
export class MemoryAudit implements AuditStore {
  private readonly entries: AuditEntry[] = [];
  private seq = 0;
  private readonly retention: Required<AuditRetention>;

  /** @throws InvalidOptionError (`audit.maxEntries`, `audit.maxAgeMs`). */
  constructor(
    private readonly clock: Clock,
    retention?: AuditRetention,
  ) {
    this.retention = resolveAuditRetention(retention);
  }

  /** Appends `record` stamped now (and prunes a bounded batch); returns the stored entry. */
  append(record: AuditRecord): AuditEntry {
    const now = this.clock.now();
    this.seq += 1;
    const entry: AuditEntry = structuredClone({ id: String(this.seq), at: now, ...record });
    this.entries.push(entry);
    this.prune(now);
    return structuredClone(entry);
  }

  async listAudit(query?: AuditQuery): Promise<AuditPage> {
    const { limit, job, actions, before, after } = auditFilter(query);
    const afterSeq = after === null ? null : Number(after);
    if (afterSeq !== null && !Number.isSafeInteger(afterSeq)) {
      throw new InvalidOptionError(
        'cursor',
        'is not a cursor of this store; pass nextCursor unchanged.',
      );
    }
    const page: AuditEntry[] = [];
    let more = false;
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const entry = this.entries[i]!;
      if (afterSeq !== null && Number(entry.id) >= afterSeq) continue;
      if (job !== null && entry.job !== job) continue;
      if (actions !== null && !actions.includes(entry.action)) continue;
      if (before !== null && entry.at >= before) continue;
      if (page.length === limit) {
        more = true;
        break;
      }
      page.push(structuredClone(entry));
    }
    const last = page.at(-1);
    return { entries: page, nextCursor: more && last ? encodeAuditCursor(last.id) : null };
  }

  private prune(now: number): void {
    const { maxEntries, maxAgeMs } = this.retention;
    let dropped = 0;
    while (
      dropped < AUDIT_PRUNE_BATCH &&
      this.entries.length > 0 &&
      (this.entries.length > maxEntries || this.entries[0]!.at < now - maxAgeMs)
    ) {
      this.entries.shift();
      dropped += 1;
    }
  }
}
