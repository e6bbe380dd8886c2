import type { InstanceRecord, LiveInstance } from '@fleetcron/core';
import { assertInstanceRecord } from '@fleetcron/core/backend';
import { type RedisClient, type RedisCommands, RedisScript } from '@fleetcron/redis-shared';
import { HEARTBEAT, INSTANCES } from './fleet-scripts.js';
import type { FleetKeys } from './keys.js';

const heartbeatScript = new RedisScript(HEARTBEAT);
const instancesScript = new RedisScript(INSTANCES);

/** The instance registry of {@link RedisStore} (one Lua script per operation). */
export class RedisFleet {
  constructor(
    private readonly redis: RedisClient,
    private readonly commands: RedisCommands,
    private readonly keys: FleetKeys,
  ) {}

  async heartbeat(instance: InstanceRecord): Promise<void> {
    assertInstanceRecord(instance);
    await this.commands.call('heartbeat', () =>
      heartbeatScript.run(
        this.redis,
        [this.keys.instances],
        [instance.instanceId, String(instance.heartbeatMs), JSON.stringify(instance)],
      ),
    );
  }

  async instances(): Promise<LiveInstance[]> {
    const flat = (await this.commands.call('instances', () =>
      instancesScript.run(this.redis, [this.keys.instances], []),
    )) as string[];
    const live: LiveInstance[] = [];
    for (let i = 0; i < flat.length; i += 3) {
      const record = JSON.parse(flat[i + 2]!) as InstanceRecord;
      live.push({ ...record, lastSeenAt: Number(flat[i + 1]) });
    }
    return live.sort((a, b) =>
      a.instanceId < b.instanceId ? -1 : a.instanceId > b.instanceId ? 1 : 0,
    );
  }

  async leave(instanceId: string): Promise<void> {
    await this.commands.call('leave', () => this.redis.hdel(this.keys.instances, instanceId));
  }
}
