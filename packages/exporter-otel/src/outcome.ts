import { isFleetcronError, type RunStatus } from '@fleetcron/core';
import { toError } from '@fleetcron/core/backend';

/** How a run ended, as seen by the tracing middleware. */
export interface RunOutcome {
  status: Exclude<RunStatus, 'running' | 'skipped'>;
  /** The error to record on the span; `null` for a success. */
  error: Error | null;
}

/**
 * Derives a run's outcome the way the scheduler records it: a `LEASE_LOST` error, or a signal
 * aborted because the lease was lost, is `lease_lost`; a signal aborted by `stop()` past its
 * drain deadline (`SCHEDULER_STOPPED`) is `aborted` (both even when the job ignored the signal
 * and returned); a `JOB_TIMEOUT` error (or one caused by it) is `timed_out`; any other throw is
 * `failed`.
 */
export function runOutcome(thrown: { value: unknown } | null, signal: AbortSignal): RunOutcome {
  const leaseLost = signal.aborted && isFleetcronError(signal.reason, 'LEASE_LOST');
  const stopped = signal.aborted && isFleetcronError(signal.reason, 'SCHEDULER_STOPPED');
  if (thrown === null) {
    if (leaseLost) return { status: 'lease_lost', error: toError(signal.reason) };
    if (stopped) return { status: 'aborted', error: toError(signal.reason) };
    return { status: 'succeeded', error: null };
  }
  const error = toError(thrown.value);
  if (isFleetcronError(error, 'LEASE_LOST') || leaseLost) return { status: 'lease_lost', error };
  if (stopped) return { status: 'aborted', error };
  if (isFleetcronError(error, 'JOB_TIMEOUT') || isFleetcronError(error.cause, 'JOB_TIMEOUT')) {
    return { status: 'timed_out', error };
  }
  return { status: 'failed', error };
}

/** The `error.type` attribute of an error: its fleetcron code, else its class name. */
export function errorType(error: Error): string {
  if (isFleetcronError(error)) return error.code;
  return error.name || error.constructor?.name || 'Error';
}
