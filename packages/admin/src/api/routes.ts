import { type FleetClient, type JsonValue, type RunStatus, UnknownJobError } from '@fleetcron/core';
import type { AdminPrincipal } from '../http/auth.js';
import { json, jsonError } from '../http/responses.js';
import type { AdminActionRecord, JobAction } from './audit.js';
import { pageLimit } from './query.js';
import { type RunRequestFleet, runRequestView } from './run-request-view.js';

/** The part of core's `FleetClient` the job routes use. */
export type AdminJobFleet = Pick<
  FleetClient,
  'fleet' | 'history' | 'pause' | 'resume' | 'requestRun'
> &
  RunRequestFleet;

/** Largest history page, runs. */
const MAX_HISTORY_LIMIT = 200;

/** Reads `?status=a,b` (validated by the store's own check). */
function statusOf(params: URLSearchParams): RunStatus[] | null {
  const raw = params.get('status');
  if (raw === null || raw.trim() === '') return null;
  return raw.split(',').map((s) => s.trim()) as RunStatus[];
}

/** Throws `UNKNOWN_JOB` (404) unless the fleet view knows the job. */
async function assertKnownJob(fleet: AdminJobFleet, job: string): Promise<void> {
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
export async function getFleet(fleet: AdminJobFleet): Promise<Response> {
  return json(200, await fleet.fleet());
}

/** `GET api/instances`. */
export async function getInstances(fleet: AdminJobFleet): Promise<Response> {
  const view = await fleet.fleet();
  return json(200, { at: view.at, instances: view.instances });
}

/** `GET api/jobs`. */
export async function getJobs(fleet: AdminJobFleet): Promise<Response> {
  const view = await fleet.fleet();
  return json(200, { at: view.at, jobs: view.jobs, drift: view.drift });
}

/** `GET api/jobs/:name`. */
export async function getJob(fleet: AdminJobFleet, name: string): Promise<Response> {
  const view = await fleet.fleet();
  const job = view.jobs.find((j) => j.name === name);
  if (!job) await assertKnownJob(fleet, name);
  return json(200, { at: view.at, job });
}

/** `GET api/jobs/:name/history?cursor=&status=&limit=`. */
export async function getHistory(
  fleet: AdminJobFleet,
  name: string,
  params: URLSearchParams,
): Promise<Response> {
  const limit = pageLimit(params, MAX_HISTORY_LIMIT, 50);
  const status = statusOf(params);
  await assertKnownJob(fleet, name);
  const page = await fleet.history(name, { limit, cursor: params.get('cursor') || null, status });
  return json(200, page);
}

/** `GET api/run-requests/:id`: the request's state and, once decided, the rows of its fire. */
export async function getRunRequest(fleet: AdminJobFleet, id: string): Promise<Response> {
  const view = await runRequestView(fleet, id);
  if (view === null) {
    return jsonError(
      404,
      'UNKNOWN_RUN_REQUEST',
      `no run request ${JSON.stringify(id)}: check the id (POST api/jobs/:name/run answers it); decided requests are kept at least an hour.`,
      { field: 'id' },
    );
  }
  return json(200, view);
}

/**
 * `POST api/jobs/:name/(pause|resume|run)`: recorded with who asked (`admin:<name>`) and the
 * body's `note`, in the store's audit log (with the mutation) and through `onAction`; `run` sends
 * the body's `data` (any JSON, checked by core: 400 `INVALID_OPTION`, field `data`) to the run.
 */
export async function postAction(
  fleet: AdminJobFleet,
  name: string,
  action: JobAction,
  who: AdminPrincipal,
  onAction: (record: AdminActionRecord) => void,
  note?: string,
  data?: JsonValue,
): Promise<Response> {
  const by = `admin:${who.name}`;
  const withNote = note === undefined ? {} : { note };
  if (action === 'run') {
    const request = await fleet.requestRun(name, {
      ...{ by, ...withNote },
      ...(data === undefined ? {} : { data }),
    });
    onAction({ action, job: name, by, at: Date.now(), requestId: request.id, ...withNote });
    return json(202, { ok: true, job: name, action, by, request });
  }
  await assertKnownJob(fleet, name);
  if (action === 'pause') await fleet.pause(name, { by, ...withNote });
  else await fleet.resume(name, { by, ...withNote });
  onAction({ action, job: name, by, at: Date.now(), ...withNote });
  return json(200, { ok: true, job: name, action, by });
}
