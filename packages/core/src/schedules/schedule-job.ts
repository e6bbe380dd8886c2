import { triggerFromSpec } from '../fleet/trigger-spec.js';
import { retry } from '../middleware/retry.js';
import { timeout } from '../middleware/timeout.js';
import type { JobHandler, Middleware } from '../middleware.js';
import type { JobDefinition } from '../scheduler/job/index.js';
import {
  type JsonValue,
  type ScheduleRef,
  type StoredSchedule,
  scheduleJobName,
} from './schedule.js';
import type { NormalizedHandler } from './schedule-handler.js';

/**
 * The Scheduler job that serves stored schedule `schedule` with `handler`, or `null` when the
 * schedule can have no further fire (its `endAt` is before the moment it took effect).
 *
 * - Name `schedule:<id>`: the same lock key for every version, so a fire `(name, time)` is
 *   claimed once fleet-wide whichever version an instance holds.
 * - `startAt` is at least the schedule's `updatedAt`: no fire from before the change is owed
 *   (neither by the late-fire rule nor by catch-up at a fleet start), so an edit never fires
 *   retroactively.
 * - Middleware: `ctx.schedule` first, then `retry`, then `timeout` (per attempt), then the
 *   handler's own.
 */
export function scheduleJob(
  schedule: StoredSchedule,
  handler: NormalizedHandler,
): JobDefinition | null {
  const o = { ...handler.defaults, ...schedule.options };
  const startAt = Math.max(o.startAt ?? Number.NEGATIVE_INFINITY, schedule.updatedAt);
  if (o.endAt !== undefined && o.endAt < startAt) return null;
  const ref: ScheduleRef = Object.freeze({
    id: schedule.id,
    data: deepFreeze(structuredClone(schedule.data)),
    version: schedule.version,
  });
  const middleware: Middleware[] = [
    (ctx, next) => next({ ...ctx, schedule: ref }),
    ...(o.retry ? [retry(o.retry)] : []),
    ...(o.timeoutMs !== undefined ? [timeout(o.timeoutMs)] : []),
    ...handler.middleware,
  ];
  return {
    name: scheduleJobName(schedule.id),
    trigger: triggerFromSpec(schedule.trigger),
    run: handler.run as JobHandler,
    middleware,
    startAt,
    ...(o.endAt !== undefined ? { endAt: o.endAt } : {}),
    ...(o.leaseMs !== undefined ? { leaseMs: o.leaseMs } : {}),
    ...(o.overlap !== undefined ? { overlap: o.overlap } : {}),
    ...(o.catchUp !== undefined ? { catchUp: o.catchUp } : {}),
    ...(o.jitterMs !== undefined ? { jitterMs: o.jitterMs } : {}),
  };
}

function deepFreeze<T extends JsonValue>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item as JsonValue);
    Object.freeze(value);
  }
  return value;
}
