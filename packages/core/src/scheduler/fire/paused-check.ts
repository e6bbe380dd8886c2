import { toError } from '../../errors.js';
import { JOB_STATE_BATCH_SIZE, type JobState, type Store } from '../../store.js';
import { Batcher } from '../lock-calls/index.js';
import type { TimerSource } from '../timing/index.js';
import { settleWithin } from '../timing/index.js';
import { safeCall } from './safe.js';

/** The batches' send times (not used here; the batcher records them). */
const MONOTONIC = { monotonic: () => performance.now() };

/**
 * Reads the fleet-wide paused flag of the fires a scheduler won, each read bounded: with a store
 * that has `getJobStates`, the reads of one macrotask (the fires of one timer wake) go out
 * together, {@link JOB_STATE_BATCH_SIZE} jobs per call; else one `getJobState` per fire.
 */
export class PauseChecks {
  private readonly batches: Batcher<string, JobState> | null;

  constructor(
    private readonly store: Store | null,
    private readonly timers: TimerSource,
  ) {
    const getJobStates = store?.getJobStates?.bind(store);
    this.batches = getJobStates
      ? new Batcher<string, JobState>({
          ...{ size: JOB_STATE_BATCH_SIZE, clock: MONOTONIC, name: 'getJobStates' },
          call: (jobs) => getJobStates(jobs),
        })
      : null;
  }

  /**
   * Whether `job` is paused fleet-wide. A failing or slow store (no answer within `boundMs`)
   * never blocks the run: it counts as not paused and goes to `onFailed`. Never rejects.
   */
  async isPaused(job: string, boundMs: number, onFailed: (error: Error) => void): Promise<boolean> {
    const { store, batches } = this;
    if (!store) return false;
    try {
      const read = batches
        ? () =>
            batches.submit(job).then((sent) => {
              if (sent === null) throw new Error('getJobStates: the read was dropped unsent');
              return sent.answer;
            })
        : () => store.getJobState(job);
      const state = await settleWithin(
        safeCall(read),
        boundMs,
        () => new Error(`store ${store.backend} did not answer getJobState in ${boundMs} ms`),
        this.timers,
      );
      return state.paused === true;
    } catch (error) {
      onFailed(toError(error));
      return false;
    }
  }
}
