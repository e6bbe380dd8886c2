import {
  type AuditEntry,
  type AuditPage,
  type AuditQuery,
  type AuditRecord,
  type AuditRetention,
  type AuditStore,
  InvalidOptionError,
} from '@fleetcron/core';
import { auditFilter, encodeAuditCursor } from '@fleetcron/core/backend';
import { type RedisClient, type RedisCommands, RedisScript } from '@fleetcron/redis-shared';
import { LIST_AUDIT } from './audit-scripts.js';
import type { AuditKeys } from './keys.js';

const listScript = new RedisScript(LIST_AUDIT);
/** Entries read per round trip when a page filters (by action or time). */
const FILTER_BATCH = 200;

/** The KEYS and ARGV a mutation script ends with to append one entry (see `audit-scripts.ts`). */
export interface AuditTail {
  keys: string[];
  args: string[];
}

/**
 * Reads an entries-hash value `<at>|<version>|<n>|<job set key (n chars)><record JSON>` of
 * entry `seq` as the entry it stores.
 */
export function decodeAuditEntry(seq: string, value: string): AuditEntry {
  const a = value.indexOf('|');
  const b = value.indexOf('|', a + 1);
  const c = value.indexOf('|', b + 1);
  const keyLength = Number(value.slice(b + 1, c));
  const record = JSON.parse(value.slice(c + 1 + keyLength)) as AuditRecord;
  const version = value.slice(a + 1, b);
  return {
    id: seq,
    at: Number(value.slice(0, a)),
    ...record,
    ...(version === '' ? {} : { version: Number(version) }),
  };
}

/**
 * The audit log of `RedisStore` (see `audit-scripts.ts`): mutation scripts append through
 * {@link RedisAudit.tail}; {@link RedisAudit.listAudit} reads newest first, from the job's own
 * set when the query names a job, with the action and time filters applied while reading.
 */
export class RedisAudit implements AuditStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly commands: RedisCommands,
    private readonly keys: AuditKeys,
    private readonly retention: Required<AuditRetention>,
  ) {}

  /** What a mutation script ends its KEYS and ARGV with to append `record` (job `record.job`). */
  tail(record: AuditRecord): AuditTail {
    return {
      keys: [this.keys.log, this.keys.entries, this.keys.sequence, this.keys.job(record.job)],
      args: [
        JSON.stringify(record),
        String(this.retention.maxEntries),
        String(this.retention.maxAgeMs),
      ],
    };
  }

  async listAudit(query?: AuditQuery): Promise<AuditPage> {
    const { limit, job, actions, before, after } = auditFilter(query);
    if (after !== null && !/^[1-9]\d{0,15}$/.test(after)) {
      throw new InvalidOptionError(
        'cursor',
        'is not a cursor returned by listAudit() of this store; pass nextCursor unchanged.',
      );
    }
    const set = job === null ? this.keys.log : this.keys.job(job);
    const filtered = actions !== null || before !== null;
    const keep = (e: AuditEntry): boolean =>
      (actions === null || actions.includes(e.action)) && (before === null || e.at < before);
    const out: AuditEntry[] = [];
    let from = after === null ? '+inf' : `(${after}`;
    for (;;) {
      const count = filtered ? Math.max(limit + 1, FILTER_BATCH) : limit + 1;
      const flat = (await this.commands.call('listAudit', (signal) =>
        listScript.run(this.redis, [set, this.keys.entries], [from, String(count)], signal),
      )) as string[];
      for (let i = 0; i < flat.length && out.length <= limit; i += 2) {
        const entry = decodeAuditEntry(flat[i]!, flat[i + 1]!);
        if (keep(entry)) out.push(entry);
        from = `(${entry.id}`;
      }
      if (flat.length < count * 2 || out.length > limit) break;
    }
    const page = out.slice(0, limit);
    const last = page.at(-1);
    return {
      entries: page,
      nextCursor: out.length > limit && last ? encodeAuditCursor(last.id) : null,
    };
  }
}
