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
  return definitionIndex(instances, new Set([name])).get(name) ?? [];
}

/**
 * {@link definitionGroups} of every job named in `names` (default: every job of `instances`),
 * in one pass over the instances' jobs: a check of 10,000 jobs across the fleet reads each
 * instance's job list once, not once per job.
 */
export function definitionIndex(
  instances: readonly LiveInstance[],
  names?: ReadonlySet<string>,
): Map<string, DefinitionGroup[]> {
  const byName = new Map<string, Map<string, DefinitionGroup>>();
  for (const instance of instances) {
    for (const job of instance.jobs) {
      if (names !== undefined && !names.has(job.name)) continue;
      let groups = byName.get(job.name);
      if (groups === undefined) {
        groups = new Map();
        byName.set(job.name, groups);
      }
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
  const index = new Map<string, DefinitionGroup[]>();
  for (const [name, groups] of byName) {
    const sorted = [...groups.values()]
      .map((g) => ({ ...g, instances: [...g.instances].sort() }))
      .sort((a, b) => b.instances.length - a.instances.length || (a.hash < b.hash ? -1 : 1));
    index.set(name, sorted);
  }
  return index;
}

/**
 * Names among `names` (default: every job of `instances`) that the live instances define with
 * more than one definition hash, in one pass that keeps only the first hash seen of each name:
 * a fleet that agrees (the usual case) costs one map, not a {@link DefinitionGroup} per job.
 */
export function disagreeingNames(
  instances: readonly LiveInstance[],
  names?: ReadonlySet<string>,
): Set<string> {
  const firstHash = new Map<string, string>();
  const disagreeing = new Set<string>();
  for (const instance of instances) {
    for (const job of instance.jobs) {
      if (names !== undefined && !names.has(job.name)) continue;
      const first = firstHash.get(job.name);
      if (first === undefined) firstHash.set(job.name, job.definitionHash);
      else if (first !== job.definitionHash) disagreeing.add(job.name);
    }
  }
  return disagreeing;
}

/** Names of the jobs whose live instances disagree on the definition hash, sorted. */
export function driftingJobs(instances: readonly LiveInstance[]): string[] {
  return [...disagreeingNames(instances)].sort();
}
