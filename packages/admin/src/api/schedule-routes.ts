import {
  type CreateScheduleInput,
  type FleetClient,
  InvalidOptionError,
  type ScheduleActor,
  type SchedulePatch,
  type StoredSchedule,
  UnknownScheduleError,
} from '@fleetcron/core';
import { scheduleJobName } from '@fleetcron/core/backend';
import type { AdminPrincipal } from '../http/auth.js';
import { noteOf } from '../http/json-body.js';
import { json } from '../http/responses.js';
import type { AdminActionRecord, ScheduleAction } from './audit.js';
import { optionalParam, pageLimit } from './query.js';

/** The part of core's `FleetClient` the stored-schedule routes use. */
export type AdminScheduleFleet = Pick<
  FleetClient,
  | 'fleet'
  | 'schedules'
  | 'getSchedule'
  | 'createSchedule'
  | 'updateSchedule'
  | 'enableSchedule'
  | 'disableSchedule'
  | 'removeSchedule'
>;

/** The tails of `POST api/schedules/:id/<tail>`. */
export const SCHEDULE_TAILS: readonly string[] = ['update', 'enable', 'disable', 'remove'];

/**
 * Largest body of a schedule mutation, bytes: a schedule's `data` may be 64 KiB of JSON, plus its
 * trigger, options and note.
 */
export const MAX_SCHEDULE_BODY_BYTES = 128 * 1024;

/** Largest page of `GET api/schedules` (core's own bound). */
const MAX_SCHEDULE_LIMIT = 1000;

/** What every schedule mutation needs besides its body. */
export interface ScheduleMutation {
  fleet: AdminScheduleFleet;
  who: AdminPrincipal;
  onAction: (record: AdminActionRecord) => void;
}

/** `GET api/schedules?handler=&limit=&cursor=`: one page by id, with the instances serving each. */
export async function listSchedules(
  fleet: AdminScheduleFleet,
  params: URLSearchParams,
): Promise<Response> {
  const page = await fleet.schedules({
    handler: optionalParam(params, 'handler'),
    limit: pageLimit(params, MAX_SCHEDULE_LIMIT, 50),
    cursor: optionalParam(params, 'cursor'),
  });
  return json(200, page);
}

/**
 * `GET api/schedules/:id`: `{ schedule }`, the stored schedule with `servedBy` (the live
 * instances whose registry holds its job, as the list has it) and `unserved`; 404
 * `UNKNOWN_SCHEDULE` when there is none.
 */
export async function getSchedule(fleet: AdminScheduleFleet, id: string): Promise<Response> {
  const [schedule, view] = await Promise.all([fleet.getSchedule(id), fleet.fleet()]);
  if (!schedule) throw new UnknownScheduleError(id);
  const job = view.jobs.find((j) => j.name === scheduleJobName(id));
  const servedBy = [...(job?.definedBy ?? [])].sort();
  return json(200, {
    schedule: { ...schedule, servedBy, unserved: schedule.enabled && servedBy.length === 0 },
  });
}

/** Keys of a body besides the schedule's own fields: the audit note and the version read. */
const BODY_KEYS = ['note', 'expectedVersion'];

/** The body without the audit note and the version, as core's create/update take it. */
function definitionOf(body: Record<string, unknown>, allowed: readonly string[]) {
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (!allowed.includes(key)) {
      throw new InvalidOptionError(
        key,
        `is not a field of this request; known: ${allowed.join(', ')}.`,
      );
    }
    if (!BODY_KEYS.includes(key)) rest[key] = value;
  }
  return rest;
}

/**
 * Who asks, the body's note (kept in the store's audit log with the change) and the version it
 * names: absent is `undefined`; anything else core checks.
 */
function actorOf(by: string, body: Record<string, unknown>): ScheduleActor {
  const note = noteOf(body);
  const noted = note === undefined ? { by } : { by, note };
  return body.expectedVersion === undefined
    ? noted
    : { ...noted, expectedVersion: body.expectedVersion as number };
}

function done(
  { onAction }: ScheduleMutation,
  action: ScheduleAction,
  by: string,
  schedule: StoredSchedule,
  note: string | undefined,
  status = 200,
): Response {
  onAction({
    action,
    job: scheduleJobName(schedule.id),
    schedule: schedule.id,
    version: schedule.version,
    by,
    at: Date.now(),
    ...(note === undefined ? {} : { note }),
  });
  return json(status, { ok: true, action, by, schedule });
}

/**
 * `POST api/schedules`: body `{ id?, handler, trigger, data?, enabled?, options?, note? }`;
 * 201 with the schedule at version 1. Bad input: core's typed error naming the field (400);
 * a taken id 409 `DUPLICATE_SCHEDULE`.
 */
export async function createSchedule(
  mutation: ScheduleMutation,
  body: Record<string, unknown>,
): Promise<Response> {
  const note = noteOf(body);
  const input = definitionOf(body, [
    'id',
    'handler',
    'trigger',
    'data',
    'enabled',
    'options',
    'note',
  ]) as unknown as CreateScheduleInput;
  const by = `admin:${mutation.who.name}`;
  const created = await mutation.fleet.createSchedule(
    input,
    note === undefined ? { by } : { by, note },
  );
  return done(mutation, 'schedule.create', by, created, note, 201);
}

/**
 * `POST api/schedules/:id/(update|enable|disable|remove)`. `update` takes
 * `{ expectedVersion, handler?, trigger?, data?, enabled?, options?, note? }` (a stale version:
 * 409 `SCHEDULE_CONFLICT`); the others `{ expectedVersion?, note? }` (without a version they act
 * on the current one). `remove` answers the schedule as it was.
 */
export async function changeSchedule(
  mutation: ScheduleMutation,
  id: string,
  tail: string,
  body: Record<string, unknown>,
): Promise<Response> {
  const note = noteOf(body);
  const by = `admin:${mutation.who.name}`;
  const actor = actorOf(by, body);
  const { fleet } = mutation;
  if (tail === 'update') {
    const patch = definitionOf(body, [
      'expectedVersion',
      'handler',
      'trigger',
      'data',
      'enabled',
      'options',
      'note',
    ]) as SchedulePatch;
    // core refuses a missing or bad expectedVersion (field expectedVersion)
    return done(
      mutation,
      'schedule.update',
      by,
      await fleet.updateSchedule(id, patch, actor),
      note,
    );
  }
  definitionOf(body, BODY_KEYS);
  if (tail === 'enable') {
    return done(mutation, 'schedule.enable', by, await fleet.enableSchedule(id, actor), note);
  }
  if (tail === 'disable') {
    return done(mutation, 'schedule.disable', by, await fleet.disableSchedule(id, actor), note);
  }
  return done(mutation, 'schedule.remove', by, await fleet.removeSchedule(id, actor), note);
}
