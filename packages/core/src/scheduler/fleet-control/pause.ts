import { InvalidOptionError, UnknownJobError } from '../../errors.js';
import type { PauseOptions } from '../../registry.js';
import type { Store } from '../../store.js';
import { assertNonEmptyString } from '../../validate.js';

/**
 * Pauses or resumes `name` fleet-wide through `store`. The job need not be registered on this
 * scheduler (an admin process or a CLI pauses any job). Throws `InvalidOptionError` (field
 * `store`) without a store and for an empty name.
 */
export async function setJobPaused(
  store: Store | null,
  name: string,
  paused: boolean,
  options: PauseOptions = {},
): Promise<void> {
  if (!store) {
    throw new InvalidOptionError(
      'store',
      `${paused ? 'pause' : 'resume'}() needs a store: pass { store } to new Scheduler().`,
    );
  }
  assertNonEmptyString('name', name);
  await store.setPaused(name, paused, { by: options.by ?? null, note: options.note ?? null });
}

/** `UNKNOWN_JOB`: no job of that name is registered on this scheduler. */
export function unknownJob(name: string): UnknownJobError {
  return new UnknownJobError(
    name,
    'name',
    `no job named ${JSON.stringify(name)} is registered on this scheduler.`,
  );
}
