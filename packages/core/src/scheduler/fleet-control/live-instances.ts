import { type DefinitionInForce, definitionsInForce, disagreeingNames } from '../../fleet/index.js';
import type { LiveInstance } from '../../registry.js';

/**
 * The live instances as the registry's last heartbeat read them, and which definition of each
 * job is in force for which fires. Fleet control writes it after each heartbeat; the fire path
 * reads it before it claims a scheduled fire and to place the parts of a sharded fire. A plain
 * value the scheduler builds first and hands to both, so neither reaches the other for it.
 */
export class LiveInstances {
  private instances: readonly LiveInstance[] | null = null;
  /**
   * Job name → its definitions in force, oldest first (from the last read), for the jobs the
   * live instances define in more than one way; the others have one definition, in force for
   * every fire (a fleet that agrees costs no group per job at each heartbeat).
   */
  private definitions = new Map<string, DefinitionInForce[]>();
  /** Names the live instances define in more than one way (from the last read). */
  private disagreeingNames: ReadonlySet<string> = new Set();

  /** @param self this scheduler's instance id (its own record tells its definitions). */
  constructor(private readonly self: string) {}

  /** The last heartbeat's answer, `null` before the first (or without a fleet-control store). */
  get current(): readonly LiveInstance[] | null {
    return this.instances;
  }

  /** Records the live instances a heartbeat read. */
  seen(instances: readonly LiveInstance[]): void {
    this.instances = instances;
    const disagreeing = disagreeingNames(instances);
    this.disagreeingNames = disagreeing;
    this.definitions =
      disagreeing.size === 0 ? new Map() : definitionsInForce(instances, disagreeing);
  }

  /** Names the live instances of the last read define in more than one way (drift). */
  get disagreeing(): ReadonlySet<string> {
    return this.disagreeingNames;
  }

  /**
   * Ids of the live instances defining job `name` (this one included once it is registered), or
   * `null` before the first heartbeat's answer: where sharded fires go. With `fireAt`, only
   * those whose definition is in force for that fire.
   */
  liveFor(name: string, fireAt?: number): string[] | null {
    if (this.instances === null) return null;
    const groups = this.definitions.get(name);
    if (groups === undefined || fireAt === undefined) {
      return this.instances
        .filter((i) => i.jobs.some((j) => j.name === name))
        .map((i) => i.instanceId);
    }
    return groups.find((g) => g.from <= fireAt && fireAt < g.until)?.instances ?? [];
  }

  /**
   * Whether this instance's definition of job `name` is in force for the fire at `fireAt`
   * (see `definitionsInForce`): always before the first read, and while the fleet defines the
   * job one way (also a job this instance added or changed since its last heartbeat, until the
   * next read shows the fleet disagreeing).
   */
  inForce(name: string, fireAt: number): boolean {
    const groups = this.definitions.get(name);
    if (this.instances === null || groups === undefined) return true;
    const own = groups.find((g) => g.instances.includes(this.self));
    return own !== undefined && own.from <= fireAt && fireAt < own.until;
  }

  /**
   * The definition this instance is on when it is superseded for `fireAt` (`inForce` false), with
   * the one in force; `null` when it is in force.
   */
  supersededBy(name: string, fireAt: number): DefinitionInForce | null {
    if (this.inForce(name, fireAt)) return null;
    const groups = this.definitions.get(name) ?? [];
    return groups.find((g) => g.from <= fireAt && fireAt < g.until) ?? null;
  }
}
