import type { JsonValue, RunRequest, RunRequestState, TakenRunRequest } from '@fleetcron/core';
import { runRequestPhase } from '@fleetcron/core/backend';

/**
 * What `r/<job>/<requestedAt>:<id>` holds: the request and where it is (its last take, its
 * decision). A request written before exactly-once requests holds only the request fields
 * (`data` too is missing before payloads): it reads back as never taken.
 */
export interface RunRequestRecord extends RunRequest {
  /** How many takes it has had. */
  takes: number;
  /** The current take's token; `null` before the first take. Kept by a release. */
  takeId: string | null;
  takenBy: string | null;
  /** Until when the current take holds it, epoch ms (writer's clock); `null` once released. */
  takenUntil: number | null;
  decidedAt: number | null;
  fireAt: number | null;
  decidedBy: string | null;
}

/** A new request's record: never taken, not decided. */
export function newRunRequestRecord(request: RunRequest): RunRequestRecord {
  return {
    ...request,
    ...{ takes: 0, takeId: null, takenBy: null, takenUntil: null },
    ...{ decidedAt: null, fireAt: null, decidedBy: null },
  };
}

/** The JSON value of a request key. */
export function encodeRunRequestRecord(record: RunRequestRecord): string {
  return JSON.stringify(record);
}

/** A request key's value, read back; absent fields (older writers) read as never taken. */
export function decodeRunRequestRecord(value: Buffer | string): RunRequestRecord {
  const stored = JSON.parse(value.toString()) as Partial<RunRequestRecord> & RunRequest;
  return {
    ...requestOf(stored),
    takes: stored.takes ?? 0,
    takeId: stored.takeId ?? null,
    takenBy: stored.takenBy ?? null,
    takenUntil: stored.takenUntil ?? null,
    decidedAt: stored.decidedAt ?? null,
    fireAt: stored.fireAt ?? null,
    decidedBy: stored.decidedBy ?? null,
  };
}

/** Whether a put of this record tells watchers a request waits (new, or released). */
export function isWaiting(record: RunRequestRecord): boolean {
  return record.decidedAt === null && record.takenUntil === null;
}

/** The request fields of a record (`data` `null` when an older writer left it out). */
export function requestOf(record: RunRequest): RunRequest {
  const { id, job, requestedBy, requestedAt } = record;
  const data: JsonValue = record.data ?? null;
  return { id, job, requestedBy, requestedAt, data };
}

/** What a take returns of a record it holds. */
export function takenOf(record: RunRequestRecord & { takeId: string }): TakenRunRequest {
  const { takeId, takenUntil, takes } = record;
  return { ...requestOf(record), takeId, takenUntil: takenUntil ?? 0, takes };
}

/** What `getRunRequest` answers for a record at `now` (writer's clock). */
export function stateOf(record: RunRequestRecord, now: number): RunRequestState {
  const { takes, takenBy, takenUntil, decidedAt, fireAt, decidedBy } = record;
  return {
    ...requestOf(record),
    ...{ state: runRequestPhase(record, now), takes, takenBy, takenUntil },
    ...{ decidedAt, fireAt, decidedBy },
  };
}
