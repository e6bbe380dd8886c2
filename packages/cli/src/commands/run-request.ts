import { type RunRequestView, runRequestView } from '@fleetcron/admin';
import type { Execution, RunRequestState } from '@fleetcron/core';
import { integerOption, type ParsedCommand } from '../args.js';
import type { Backend } from '../connect.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import type { CliIo } from '../io.js';

/** How long `run --wait` waits by default, ms (`--timeout`): five minutes. */
export const DEFAULT_WAIT_TIMEOUT_MS = 5 * 60_000;
/** Longest `--timeout`, ms: a day. */
const MAX_WAIT_TIMEOUT_MS = 24 * 60 * 60_000;
/** How often `run --wait` asks the store, ms. */
const WAIT_POLL_MS = 250;

const iso = (at: number | null): string => (at === null ? '-' : new Date(at).toISOString());

/** One line saying where a request is: pending, taken by whom until when, or decided as which fire. */
export function describeRequest(request: RunRequestState): string {
  const head = `request ${request.id} (job ${request.job}, by ${request.requestedBy} at ${iso(request.requestedAt)})`;
  switch (request.state) {
    case 'pending':
      return request.takes === 0
        ? `${head}: pending, no instance has taken it yet`
        : `${head}: pending again after ${request.takes} take(s) (last by ${request.takenBy ?? '-'}); the next instance to poll takes it`;
    case 'taken':
      return `${head}: taken by ${request.takenBy ?? '-'} until ${iso(request.takenUntil)} (take ${request.takes})`;
    default:
      return `${head}: decided as the manual fire ${iso(request.fireAt)} by ${request.decidedBy ?? '-'} at ${iso(request.decidedAt)}`;
  }
}

/** One line per history row of the fire: status, instance, took, first line of the error. */
function describeExecution(e: Execution): string {
  const part = e.shard
    ? e.shard.each
      ? ' (each)'
      : ` (part ${e.shard.index} of ${e.shard.count})`
    : '';
  const took = e.finishedAt === null ? 'still running' : `took ${e.finishedAt - e.startedAt} ms`;
  const reason = e.reason ? ` (${e.reason})` : '';
  const error = e.error ? `: ${e.error.split('\n')[0] ?? ''}` : '';
  return `${e.status}${reason}${part} on ${e.instanceId}, ${took}${error}`;
}

/** The human text of a view: the request's line, then one line per row of its fire. */
function describeView(view: RunRequestView): string {
  const lines = [describeRequest(view.request)];
  if (view.request.state === 'decided' && view.executions.length === 0)
    lines.push('its run is not recorded yet');
  lines.push(...view.executions.map(describeExecution));
  return lines.join('\n');
}

/** The exit code of a finished fire: 0 succeeded, 7 skipped, 6 any other end. */
function exitOfOutcome(view: RunRequestView): ExitCode {
  if (view.outcome === 'succeeded') return EXIT.ok;
  if (view.outcome === 'skipped') return EXIT.runSkipped;
  return EXIT.runFailed;
}

/** Prints that request `id` is unknown and returns exit code 4. */
function unknownRequest(id: string, io: CliIo): ExitCode {
  io.err(
    `fleetcron: no run request ${JSON.stringify(id)}: check the id (fleetcron run prints it); decided requests are kept at least an hour`,
  );
  return EXIT.unknownJob;
}

/**
 * Waits for request `id` (`fleetcron run --wait`): polls until it is decided and every history row
 * of its fire is terminal, then prints the outcome; exit 0 succeeded, 6 failed (or timed out,
 * lease lost, aborted), 7 skipped, 8 when `--timeout` passed first (printing where it was).
 */
export async function waitForRequest(
  backend: Backend,
  id: string,
  options: ParsedCommand['options'],
  io: CliIo,
): Promise<ExitCode> {
  const timeoutMs = integerOption(
    'timeout',
    options.timeout,
    DEFAULT_WAIT_TIMEOUT_MS,
    MAX_WAIT_TIMEOUT_MS,
  );
  const deadline = Date.now() + timeoutMs;
  let view: RunRequestView | null = null;
  for (;;) {
    view = await runRequestView(backend.fleet, id);
    if (view === null) return unknownRequest(id, io);
    if (view.outcome !== null || Date.now() >= deadline) break;
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(WAIT_POLL_MS, deadline - Date.now())),
    );
  }
  const timedOut = view.outcome === null;
  if (options.json) io.out(JSON.stringify({ ...view, timedOut }, null, 2));
  else io.out(describeView(view));
  if (!timedOut) return exitOfOutcome(view);
  io.err(
    `fleetcron: --timeout ${timeoutMs} ms passed before the run ended; the request stays and may still run (fleetcron request ${id})`,
  );
  return EXIT.waitTimeout;
}

/** `fleetcron request <id>`: where a run request is and, once decided, the run it became. */
export async function requestCommand(
  backend: Backend,
  { operand, options }: ParsedCommand,
  io: CliIo,
): Promise<ExitCode> {
  const id = operand as string;
  const view = await runRequestView(backend.fleet, id);
  if (view === null) return unknownRequest(id, io);
  io.out(options.json ? JSON.stringify(view, null, 2) : describeView(view));
  return EXIT.ok;
}
