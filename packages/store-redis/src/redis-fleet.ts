import type { InstanceRecord, LiveInstance, RunRequest, RunRequestInput } from '@fleetcron/core';
import { assertInstanceRecord, newRunRequest } from '@fleetcron/core/backend';
import { type RedisClient, type RedisCommands, RedisScript } from '@fleetcron/redis-shared';
import { ChannelSubscriber } from './channel-subscriber.js';
import { HEARTBEAT, INSTANCES, REQUEST_RUN, TAKE_RUN_REQUESTS } from './fleet-scripts.js';
import type { FleetKeys } from './keys.js';

const heartbeatScript = new RedisScript(HEARTBEAT);
const instancesScript = new RedisScript(INSTANCES);
const requestRunScript = new RedisScript(REQUEST_RUN);
const takeScript = new RedisScript(TAKE_RUN_REQUESTS);

/** The registry and run requests of {@link RedisStore} (one Lua script per operation). */
export class RedisFleet {
  private readonly subscriber: ChannelSubscriber;

  constructor(
    private readonly redis: RedisClient,
    private readonly commands: RedisCommands,
    private readonly keys: FleetKeys,
  ) {
    this.subscriber = new ChannelSubscriber(redis, keys.channel);
  }

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

  async requestRun(input: RunRequestInput): Promise<RunRequest> {
    const request = newRunRequest(input, 0);
    const at = await this.commands.call('requestRun', () =>
      requestRunScript.run(
        this.redis,
        [this.keys.sequence, this.keys.requests(request.job)],
        [request.id, request.job, request.requestedBy, this.keys.channel],
      ),
    );
    return { ...request, requestedAt: Number(at) };
  }

  async takeRunRequests(jobs: readonly string[]): Promise<RunRequest[]> {
    if (jobs.length === 0) return [];
    const keys = [...new Set(jobs)].map((job) => this.keys.requests(job));
    const entries = (await this.commands.call('takeRunRequests', () =>
      takeScript.run(this.redis, keys, []),
    )) as string[];
    return entries
      .map((entry) => {
        const a = entry.indexOf('|');
        const b = entry.indexOf('|', a + 1);
        const [id, job, requestedBy] = JSON.parse(entry.slice(b + 1)) as [string, string, string];
        const request: RunRequest = {
          id,
          job,
          requestedBy,
          requestedAt: Number(entry.slice(a + 1, b)),
        };
        return { seq: Number(entry.slice(0, a)), request };
      })
      .sort((x, y) => x.seq - y.seq)
      .map((x) => x.request);
  }

  watchRunRequests(listener: (job: string) => void): () => void {
    return this.subscriber.subscribe(listener);
  }

  close(): void {
    this.subscriber.stop();
  }
}
