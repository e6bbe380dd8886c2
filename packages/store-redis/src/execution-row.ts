import { type Execution, InvalidOptionError } from '@fleetcron/core';
import { boundErrorText, decodeShard, normalizeShard } from '@fleetcron/core/backend';
import { MAX_STARTED_AT, padTime } from './keys.js';

/** Length of the `padTime(startedAt)` head of a stored row. */
const HEAD_LENGTH = padTime(0).length;

/**
 * An execution as the store keeps it in the job's executions hash: `padTime(startedAt)` (so the
 * scripts can read the start time without decoding JSON) followed by its JSON, the error text
 * bounded to `maxErrorLength` and the shard normalized (absent for a plain fire). Throws
 * `InvalidOptionError` for a bad `startedAt` or `shard`, before anything is sent.
 */
export function encodeExecutionRow(execution: Execution, maxErrorLength: number): string {
  const { startedAt } = execution;
  if (!Number.isSafeInteger(startedAt) || startedAt < 0 || startedAt > MAX_STARTED_AT) {
    throw new InvalidOptionError(
      'startedAt',
      `must be an integer epoch ms between 0 and ${MAX_STARTED_AT}, got ${String(startedAt)}.`,
    );
  }
  const shard = normalizeShard(execution.shard);
  const { shard: _given, ...rest } = execution;
  const stored: Execution = {
    ...rest,
    error: boundErrorText(execution.error, maxErrorLength),
    ...(shard ? { shard } : {}), // a part of a sharded fire; absent for a plain fire
  };
  return padTime(startedAt) + JSON.stringify(stored);
}

/** The execution a stored row holds (rows written before `requestedBy` existed read `null`). */
export function decodeExecutionRow(value: string): Execution {
  const { shard: stored, ...row } = JSON.parse(value.slice(HEAD_LENGTH)) as Execution;
  const shard = decodeShard(stored);
  return { ...row, requestedBy: row.requestedBy ?? null, ...(shard ? { shard } : {}) };
}
