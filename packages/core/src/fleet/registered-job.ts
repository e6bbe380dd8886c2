import type { Calendar } from '../calendar/calendar.js';
import { calendarSpecOf } from '../calendar/calendar-from-spec.js';
import type { CatchUpSpec, ExclusionSpec, RegisteredJob } from '../registry.js';
import type { Trigger } from '../trigger.js';
import { definitionHash } from './definition-hash.js';
import { triggerSpecOf } from './trigger-spec.js';

/** What {@link registeredJob} needs to know about a job. */
export interface RegisteredJobInput {
  name: string;
  trigger: Trigger;
  leaseMs: number;
  overlap: string;
  /** Default `skip`. */
  catchUp?: CatchUpSpec;
  /** `shards` of a sharded job; absent or `null` for a plain job. */
  shards?: number | 'each' | null;
  /** The job's `exclude` calendar; absent or `null` when it has none. */
  exclude?: Calendar | null;
  /** The job's `startAt` / `endAt` (epoch ms, `null`: open); absent when it has none. */
  window?: { readonly startAt: number | null; readonly endAt: number | null };
  /** The job's `jitterMs`; absent or 0 without jitter. */
  jitterMs?: number;
}

/** The registry form of a job's calendar: description and spec (`null` for a custom calendar). */
export function exclusionSpecOf(calendar: Calendar): ExclusionSpec {
  return { description: calendar.describe(), spec: calendarSpecOf(calendar) };
}

/**
 * The job as a heartbeat publishes it: description, spec and definition hash computed the one
 * way every instance computes them (for the scheduler's heartbeat).
 */
export function registeredJob(job: RegisteredJobInput): RegisteredJob {
  const trigger = job.trigger.describe();
  const spec = triggerSpecOf(job.trigger);
  const catchUp = job.catchUp ?? 'skip';
  const exclude = job.exclude ? exclusionSpecOf(job.exclude) : undefined;
  return {
    name: job.name,
    trigger,
    spec,
    definitionHash: definitionHash({
      trigger,
      spec,
      leaseMs: job.leaseMs,
      overlap: job.overlap,
      catchUp,
      shards: job.shards ?? undefined,
      exclude,
      jitterMs: job.jitterMs ? job.jitterMs : undefined,
    }),
    leaseMs: job.leaseMs,
    overlap: job.overlap,
    catchUp,
    ...(job.shards != null ? { shards: job.shards } : {}),
    ...(exclude ? { exclude } : {}),
    ...(job.jitterMs ? { jitterMs: job.jitterMs } : {}),
    // the trigger's description already carries the bounds, so they are in the hash
    ...(job.window?.startAt != null ? { startAt: job.window.startAt } : {}),
    ...(job.window?.endAt != null ? { endAt: job.window.endAt } : {}),
  };
}
