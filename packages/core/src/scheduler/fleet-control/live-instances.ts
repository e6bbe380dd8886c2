import type { LiveInstance } from '../../registry.js';

/**
 * The live instances as the registry's last heartbeat read them. Fleet control writes it after
 * each heartbeat; the fire path reads it to place the parts of a sharded fire. A plain value the
 * scheduler builds first and hands to both, so neither reaches the other for it.
 */
export class LiveInstances {
  private instances: readonly LiveInstance[] | null = null;

  /** The last heartbeat's answer, `null` before the first (or without a fleet-control store). */
  get current(): readonly LiveInstance[] | null {
    return this.instances;
  }

  /** Records the live instances a heartbeat read. */
  seen(instances: readonly LiveInstance[]): void {
    this.instances = instances;
  }

  /**
   * Ids of the live instances defining job `name` (this one included once it is registered), or
   * `null` before the first heartbeat's answer: where sharded fires go.
   */
  liveFor(name: string): string[] | null {
    if (this.instances === null) return null;
    return this.instances
      .filter((i) => i.jobs.some((j) => j.name === name))
      .map((i) => i.instanceId);
  }
}
