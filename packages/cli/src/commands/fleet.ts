import {
  describeFireGroup,
  type Execution,
  type FleetJob,
  type FleetView,
  type JsonValue,
  type LiveInstance,
  type RunStatus,
} from '@fleetcron/core';
import { integerOption, type ParsedCommand, UsageError } from '../args.js';
import { type Backend, defaultActor } from '../connect.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import type { CliIo } from '../io.js';
import { table } from '../table.js';
import { unknownJob } from '../unknown-job.js';
import { waitForRequest } from './run-request.js';
import { jsonOption } from './schedules.js';

const iso = (at: number | null | undefined): string =>
  typeof at === 'number' ? new Date(at).toISOString() : '-';

function jobStatus(job: FleetJob): string {
  const parts = [job.paused ? `paused${job.pausedBy ? ` by ${job.pausedBy}` : ''}` : 'active'];
  if (job.drift) parts.push('DRIFT');
  return parts.join(', ');
}

/** At most this many instance ids per definition in the drift lines (then `+N more`). */
const DRIFT_IDS_SHOWN = 8;

/** Which instances define a drifting job how: one indented line per definition, majority first. */
function driftLines(job: FleetJob): string {
  const lines = job.definitions.map((d) => {
    const ids = d.instances.slice(0, DRIFT_IDS_SHOWN).join(', ');
    const more =
      d.instances.length > DRIFT_IDS_SHOWN ? ` +${d.instances.length - DRIFT_IDS_SHOWN} more` : '';
    return `    ${d.trigger} (definition ${d.hash.slice(0, 12)}) on ${d.instances.length}: ${ids}${more}`;
  });
  return [`  ${job.name}:`, ...lines].join('\n');
}

function instanceRows(instances: readonly LiveInstance[]): string[][] {
  return instances.map((i) => [
    i.instanceId,
    `${i.host}:${i.pid}`,
    i.version,
    iso(i.startedAt),
    iso(i.lastSeenAt),
    String(i.jobs.length),
    i.clock ? `${Math.round(i.clock.offsetMs)} ms` : '-',
  ]);
}

/** `fleetcron instances`. */
export async function instancesCommand(
  backend: Backend,
  { options }: ParsedCommand,
  io: CliIo,
): Promise<ExitCode> {
  const view = await backend.fleet.fleet();
  if (options.json) io.out(JSON.stringify(view.instances, null, 2));
  else if (view.instances.length === 0) io.out('no live instance');
  else
    io.out(
      table(
        ['INSTANCE', 'HOST:PID', 'VERSION', 'STARTED', 'LAST SEEN', 'JOBS', 'CLOCK'],
        instanceRows(view.instances),
      ),
    );
  return EXIT.ok;
}

/** `fleetcron jobs`. */
export async function jobsCommand(
  backend: Backend,
  { options }: ParsedCommand,
  io: CliIo,
): Promise<ExitCode> {
  const view: FleetView = await backend.fleet.fleet();
  if (options.json) {
    io.out(JSON.stringify(view.jobs, null, 2));
    return EXIT.ok;
  }
  if (view.jobs.length === 0) {
    io.out('no jobs');
    return EXIT.ok;
  }
  const rows = view.jobs.map((job) => [
    job.name,
    job.trigger ?? '-',
    job.nextFires[0]?.utc ?? '-',
    job.nextFires[0]
      ? `${job.nextFires[0].local} ${job.nextFires[0].zone}${job.nextFires[0].excluded === undefined ? '' : ` (excluded: ${job.nextFires[0].excluded})`}`
      : '-',
    jobStatus(job),
    job.lastStatus ? `${job.lastStatus} ${iso(job.lastFinishedAt)}` : '-',
    String(job.definedBy.length),
  ]);
  io.out(
    table(['JOB', 'TRIGGER', 'NEXT (UTC)', 'NEXT (ZONE)', 'STATE', 'LAST', 'INSTANCES'], rows),
  );
  if (view.drift.length > 0) {
    io.err(`warning: drift in ${view.drift.join(', ')}: live instances define them differently`);
    for (const job of view.jobs.filter((j) => j.drift)) io.err(driftLines(job));
  }
  return EXIT.ok;
}

/** `fleetcron history <job> [--status s] [--limit n] [--cursor c]`. */
export async function historyCommand(
  backend: Backend,
  { operand, options }: ParsedCommand,
  io: CliIo,
): Promise<ExitCode> {
  const job = operand as string;
  const view = await backend.fleet.fleet();
  if (!view.jobs.some((j) => j.name === job)) return unknownJob(job, view, io);
  const status = options.status
    ? (options.status.split(',').map((s) => s.trim()) as RunStatus[])
    : null;
  const page = await backend.fleet.history(job, {
    limit: integerOption('limit', options.limit, 20, 1000),
    cursor: options.cursor ?? null,
    status,
  });
  if (options.json) {
    io.out(JSON.stringify(page, null, 2));
    return EXIT.ok;
  }
  const row = (e: Execution, fire: string) => [
    fire,
    e.status + (e.reason ? ` (${e.reason})` : ''),
    iso(e.startedAt),
    e.finishedAt === null ? '-' : `${e.finishedAt - e.startedAt} ms`,
    e.instanceId,
    e.requestedBy ? `manual by ${e.requestedBy}` : 'schedule',
    (e.error ?? '').split('\n')[0] ?? '',
  ];
  // a sharded fire is one line with its parts under it
  const rows = page.fires.flatMap((fire) => {
    if (fire.kind === 'single') return fire.executions.map((e) => row(e, iso(e.fireAt)));
    const head = [iso(fire.fireAt), describeFireGroup(fire), '', '', '', '', ''];
    const parts = fire.executions.map((e) =>
      row(e, e.shard?.each ? '  each' : `  part ${e.shard?.index} of ${e.shard?.count}`),
    );
    return [head, ...parts];
  });
  io.out(
    page.executions.length === 0
      ? 'no runs'
      : table(['FIRE', 'STATUS', 'STARTED', 'TOOK', 'INSTANCE', 'TRIGGER', 'ERROR'], rows),
  );
  if (page.nextCursor) io.err(`more: --cursor ${page.nextCursor}`);
  return EXIT.ok;
}

/**
 * `fleetcron pause|resume|run <job> [--by name] [--note text]` (`run` also `[--data JSON]
 * [--wait [--timeout MS]]`). The note is kept in the store's audit log (`fleetcron audit`).
 */
export async function actionCommand(
  backend: Backend,
  action: 'pause' | 'resume' | 'run',
  { operand, options }: ParsedCommand,
  io: CliIo,
): Promise<ExitCode> {
  const job = operand as string;
  const by = options.by ?? defaultActor();
  const note = options.note === undefined ? {} : { note: options.note };
  if (options.timeout !== undefined && !options.wait)
    throw new UsageError('--timeout applies to "run --wait" only');
  const view = await backend.fleet.fleet();
  if (!view.jobs.some((j) => j.name === job)) return unknownJob(job, view, io);
  if (action === 'run') {
    const data = jsonOption('data', options.data) as JsonValue | undefined;
    const request = await backend.fleet.requestRun(job, {
      by,
      ...note,
      ...(data === undefined ? {} : { data }),
    });
    if (options.wait) {
      if (!options.json)
        io.out(
          `run of ${job} requested (request ${request.id}, by ${by}); waiting for its outcome`,
        );
      return waitForRequest(backend, request.id, options, io);
    }
    if (options.json) io.out(JSON.stringify({ ok: true, job, action, by, request }));
    else
      io.out(
        `run of ${job} requested (request ${request.id}, by ${by}); an instance takes it within about a second and runs it once (fleetcron request ${request.id} shows where it is)`,
      );
    return EXIT.ok;
  }
  if (action === 'pause') await backend.fleet.pause(job, { by, ...note });
  else await backend.fleet.resume(job, { by, ...note });
  if (options.json) io.out(JSON.stringify({ ok: true, job, action, by }));
  else io.out(`${job} ${action === 'pause' ? 'paused' : 'resumed'} on every instance (by ${by})`);
  return EXIT.ok;
}
