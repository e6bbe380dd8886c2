import type { LiveInstance } from '../registry.js';

/**
 * One definition of a job as the live instances hold it, and the fire times it is in force for:
 * `[from, until)` on the fleet's clock (epoch ms; `-Infinity` / `Infinity` when open).
 */
export interface DefinitionInForce {
  /** The definition hash. */
  hash: string;
  /**
   * When the definition was first registered by a live instance that still holds it, on the
   * backend's clock (the instance's `registeredAt` less its measured clock offset).
   */
  since: number;
  /** First fire time it is in force for. */
  from: number;
  /** First fire time it is no longer in force for (the next definition's `from`). */
  until: number;
  /** Ids of the live instances holding it, sorted. */
  instances: string[];
}

/**
 * How many heartbeats after a new definition is first registered it comes into force: every
 * instance on the older one reads the registry at least once in between (it reads after each
 * heartbeat), so it has stopped claiming the job's fires before the new one starts.
 */
export const DEFINITION_SWITCH_HEARTBEATS = 2;

/**
 * The definitions of every job the live `instances` define (of those in `names`, when given),
 * oldest first, each with the fire
 * times it is in force for: during a rolling deploy, fires follow **one** definition fleet-wide.
 * The newest definition (the one first registered most recently by an instance still live) comes
 * into force {@link DEFINITION_SWITCH_HEARTBEATS} × the longest `heartbeatMs` of the job's
 * instances after it was registered; the one before it stays in force until then. A definition
 * whose instances are all gone drops out, so the survivors' windows widen (the last one alone is
 * in force for every fire). Registration times are compared on the backend's clock (each
 * instance's clock offset taken out), so a skewed instance does not jump the order.
 */
export function definitionsInForce(
  instances: readonly LiveInstance[],
  names?: ReadonlySet<string>,
): Map<string, DefinitionInForce[]> {
  const byName = new Map<string, Map<string, DefinitionInForce>>();
  const heartbeat = new Map<string, number>();
  for (const instance of instances) {
    const offset = instance.clock?.offsetMs ?? 0;
    for (const job of instance.jobs) {
      if (names !== undefined && !names.has(job.name)) continue;
      const since = (job.registeredAt ?? instance.startedAt) - offset;
      heartbeat.set(job.name, Math.max(heartbeat.get(job.name) ?? 0, instance.heartbeatMs));
      let groups = byName.get(job.name);
      if (groups === undefined) {
        groups = new Map();
        byName.set(job.name, groups);
      }
      const group = groups.get(job.definitionHash);
      if (group === undefined) {
        groups.set(job.definitionHash, {
          hash: job.definitionHash,
          since,
          from: Number.NEGATIVE_INFINITY,
          until: Number.POSITIVE_INFINITY,
          instances: [instance.instanceId],
        });
      } else {
        group.since = Math.min(group.since, since);
        group.instances.push(instance.instanceId);
      }
    }
  }
  const index = new Map<string, DefinitionInForce[]>();
  for (const [name, groups] of byName) {
    const switchMs = DEFINITION_SWITCH_HEARTBEATS * (heartbeat.get(name) ?? 0);
    const ordered = [...groups.values()].sort(
      (a, b) => a.since - b.since || (a.hash < b.hash ? -1 : 1),
    );
    for (const [i, group] of ordered.entries()) {
      group.instances.sort();
      if (i === 0) continue;
      const before = ordered[i - 1] as DefinitionInForce;
      group.from = Math.max(before.from, group.since + switchMs);
      before.until = group.from;
    }
    index.set(name, ordered);
  }
  return index;
}
