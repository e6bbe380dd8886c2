import { type DefinitionGroup, definitionIndex, disagreeingNames } from '../../fleet/drift.js';
import type { Logger } from '../../logger.js';
import type { LiveInstance } from '../../registry.js';
import { safePublish } from '../fire/index.js';

/** The groups of a job the live instances agree on (or do not define): no drift. */
const NO_DRIFT: readonly DefinitionGroup[] = [];

/**
 * Watches the live instances for drift on this scheduler's jobs: instances that define a job
 * with different definition hashes. Reports each job's drift once when it starts or when the
 * set of definitions changes (`fleet.drift` + a warning), and once when it ends
 * (`fleet.drift_resolved` + an info line); not on every heartbeat.
 */
export class DriftWatch {
  /** Job name → the sorted hashes last reported as drifting. */
  private readonly reported = new Map<string, string>();

  constructor(
    private readonly instanceId: string,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {}

  /**
   * Checks the jobs named in `jobs` (in their order) against the live `instances` (this
   * instance's own record included). The definition groups are built only for the jobs the
   * instances disagree on (`disagreeing`: the names the instances define in more than one way,
   * when the caller has them already): a heartbeat of a fleet in agreement builds none.
   */
  check(
    instances: readonly LiveInstance[],
    jobs: ReadonlySet<string>,
    disagreeing: ReadonlySet<string> = disagreeingNames(instances, jobs), // one pass, not one per job
  ): void {
    const mine = [...disagreeing].filter((name) => jobs.has(name));
    const index = mine.length === 0 ? null : definitionIndex(instances, new Set(mine));
    for (const job of jobs) this.checkJob(job, index?.get(job) ?? NO_DRIFT);
    for (const job of [...this.reported.keys()]) {
      if (!jobs.has(job)) this.reported.delete(job); // removed here: no longer ours to report
    }
  }

  /** Jobs currently drifting, as last reported. */
  drifting(): string[] {
    return [...this.reported.keys()].sort();
  }

  private checkJob(job: string, groups: readonly DefinitionGroup[]): void {
    const before = this.reported.get(job);
    const { instanceId } = this;
    if (groups.length < 2) {
      if (before === undefined) return;
      this.reported.delete(job);
      safePublish({ type: 'fleet.drift_resolved', instanceId, at: this.now(), job });
      this.log.info('fleetcron: live instances agree again on the job definition', { job });
      return;
    }
    const signature = groups
      .map((g) => g.hash)
      .sort()
      .join(',');
    if (signature === before) return;
    this.reported.set(job, signature);
    const definitions = groups.map((g) => ({ hash: g.hash, instances: g.instances }));
    safePublish({ type: 'fleet.drift', instanceId, at: this.now(), job, definitions });
    this.log.warn('fleetcron: live instances define this job differently (drift)', {
      job,
      definitions: groups.map((g) => ({
        hash: g.hash,
        trigger: g.job.trigger,
        instances: g.instances,
      })),
    });
  }
}
