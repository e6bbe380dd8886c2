import { createHash } from 'node:crypto';
import type { CatchUpSpec, ExclusionSpec, TriggerSpec } from '../registry.js';

/** What defines a job for drift detection. */
export interface DefinitionHashInput {
  /** The trigger's `describe()`. */
  trigger: string;
  /** The trigger's spec, `null` (or absent) for custom triggers. */
  spec?: TriggerSpec | null;
  /** Lease length, ms. */
  leaseMs: number;
  /** Overlap rule, e.g. `skip`. */
  overlap: string;
  /** Catch-up policy. Default `skip`. */
  catchUp?: CatchUpSpec;
  /** `shards` of a sharded job (absent for a plain job, so plain jobs keep their hash). */
  shards?: number | 'each';
  /** The job's calendar as published (absent for a job without one, so such jobs keep their hash). */
  exclude?: ExclusionSpec | null;
  /** The job's `jitterMs` (absent without jitter, so such jobs keep their hash). */
  jitterMs?: number;
}

/** JSON with object keys sorted, so equal definitions give equal text whatever the key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * A stable hash of a job's definition: trigger (spec when built-in, else its description),
 * lease, overlap rule, catch-up policy, shards, jitter and excluded fires (calendar spec when built-in,
 * else its description). Two instances defining a job the same way get the
 * same hash on any machine and version of Node; a difference is fleet drift. 16 hex characters
 * (the first 64 bits of SHA-256).
 */
export function definitionHash(job: DefinitionHashInput): string {
  const text = canonical({
    trigger: job.spec ? { spec: job.spec } : { description: job.trigger },
    leaseMs: job.leaseMs,
    overlap: job.overlap,
    catchUp: job.catchUp ?? 'skip',
    shards: job.shards, // absent (undefined) for a plain job: dropped from the text
    // absent without a calendar; a calendar by its spec when built-in, else by its description
    exclude: job.exclude
      ? job.exclude.spec
        ? { spec: job.exclude.spec }
        : { description: job.exclude.description }
      : undefined,
    jitterMs: job.jitterMs || undefined, // absent without jitter: dropped from the text
  });
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
}
