import type { LiveInstance, RegisteredJob } from '../registry.js';

/** The instances that define a job with one definition hash. */
export interface DefinitionGroup {
  /** The definition hash. */
  hash: string;
  /** Ids of the live instances defining the job with this hash, sorted. */
  instances: string[];
  /** The job as the first of these instances publishes it. */
  job: RegisteredJob;
}

/**
 * Groups the live instances defining `name` by definition hash, largest group first (ties by
 * hash), so the first group is the fleet's majority definition. More than one group is drift.
 */
export function definitionGroups(
  instances: readonly LiveInstance[],
  name: string,
): DefinitionGroup[] {
  const groups = new Map<string, DefinitionGroup>();
  for (const instance of instances) {
    for (const job of instance.jobs) {
      if (job.name !== name) continue;
      const group = groups.get(job.definitionHash);
      if (group) group.instances.push(instance.instanceId);
      else
        groups.set(job.definitionHash, {
          hash: job.definitionHash,
          instances: [instance.instanceId],
          job,
        });
    }
  }
  return [...groups.values()]
    .map((g) => ({ ...g, instances: [...g.instances].sort() }))
    .sort((a, b) => b.instances.length - a.instances.length || (a.hash < b.hash ? -1 : 1));
}

/** Names of the jobs whose live instances disagree on the definition hash, sorted. */
export function driftingJobs(instances: readonly LiveInstance[]): string[] {
  const names = new Set(instances.flatMap((i) => i.jobs.map((j) => j.name)));
  return [...names].filter((name) => definitionGroups(instances, name).length > 1).sort();
}
