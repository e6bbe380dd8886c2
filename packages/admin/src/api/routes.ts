import {
  type FleetClient,
  InvalidOptionError,
  type RunStatus,
  UnknownJobError,
} from '@fleetcron/core';
import type { AdminPrincipal } from '../http/auth.js';
import { json } from '../http/responses.js';

/** The part of core's `FleetClient` the admin handler uses (pass a `FleetClient`). */
export type AdminFleet = Pick<FleetClient, 'fleet' | 'history' | 'pause' | 'resume' | 'requestRun'>;

/** A job mutation of the API. */
export type JobAction = 'pause' | 'resume' | 'run';

/** One mutation done through the API, as `onAction` receives it (an audit record). */
export interface AdminActionRecord {
  action: JobAction;
  job: string;
  /** Who asked: `admin:<principal name>`, as stored with the pause or the run request. */
  by: string;
  /** When it was done, epoch ms (server clock). */
  at: number;
  /** The run request's id, for `run`. */
  requestId?: string;
  /** Why, as the caller wrote it in the body's `note` (at most 1 000 characters). */
  note?: string;
}

const MAX_LIMIT = 200;

/** Reads `?limit=` (1..200, default 50) with a typed error naming the field. */
function limitOf(params: URLSearchParams): number {
  const raw = params.get('limit');
  if (raw === null || raw === '') return 50;
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new InvalidOptionError('limit', `must be an integer from 1 to ${MAX_LIMIT}, got ${raw}.`);
  }
  return limit;
}

/** Reads `?status=a,b` (validated by the store's own check). */
function statusOf(params: URLSearchParams): RunStatus[] | null {
  const raw = params.get('status');
  if (raw === null || raw.trim() === '') return null;
  return raw.split(',').map((s) => s.trim()) as RunStatus[];
}

/** Throws `UNKNOWN_JOB` (404) unless the fleet view knows the job. */
async function assertKnownJob(fleet: AdminFleet, job: string): Promise<void> {
  const view = await fleet.fleet();
  if (!view.jobs.some((j) => j.name === job)) {
    throw new UnknownJobError(
      job,
      'job',
      `unknown job ${JSON.stringify(job)}: no live instance defines it and the store has no state for it. Check the name (GET api/jobs lists them).`,
    );
  }
}

/** `GET api/fleet`: instances and jobs in one answer (what the console polls). */
export async function getFleet(fleet: AdminFleet): Promise<Response> {
  return json(200, await fleet.fleet());
}

/** `GET api/instances`. */
export async function getInstances(fleet: AdminFleet): Promise<Response> {
  const view = await fleet.fleet();
  return json(200, { at: view.at, instances: view.instances });
}

/** `GET api/jobs`. */
export async function getJobs(fleet: AdminFleet): Promise<Response> {
  const view = await fleet.fleet();
  return json(200, { at: view.at, jobs: view.jobs, drift: view.drift });
}

/** `GET api/jobs/:name`. */
export async function getJob(fleet: AdminFleet, name: string): Promise<Response> {
  const view = await fleet.fleet();
  const job = view.jobs.find((j) => j.name === name);
  if (!job) await assertKnownJob(fleet, name);
  return json(200, { at: view.at, job });
}

/** `GET api/jobs/:name/history?cursor=&status=&limit=`. */
export async function getHistory(
  fleet: AdminFleet,
  name: string,
  params: URLSearchParams,
): Promise<Response> {
  const limit = limitOf(params);
  const status = statusOf(params);
  await assertKnownJob(fleet, name);
  const page = await fleet.history(name, { limit, cursor: params.get('cursor') || null, status });
  return json(200, page);
}

/** `POST api/jobs/:name/(pause|resume|run)`: recorded with who asked (`admin:<name>`). */
export async function postAction(
  fleet: AdminFleet,
  name: string,
  action: JobAction,
  who: AdminPrincipal,
  onAction: (record: AdminActionRecord) => void,
  note?: string,
): Promise<Response> {
  const by = `admin:${who.name}`;
  const withNote = note === undefined ? {} : { note };
  if (action === 'run') {
    const request = await fleet.requestRun(name, { by });
    onAction({ action, job: name, by, at: Date.now(), requestId: request.id, ...withNote });
    return json(202, { ok: true, job: name, action, by, request });
  }
  await assertKnownJob(fleet, name);
  if (action === 'pause') await fleet.pause(name, { by });
  else await fleet.resume(name, { by });
  onAction({ action, job: name, by, at: Date.now(), ...withNote });
  return json(200, { ok: true, job: name, action, by });
}
