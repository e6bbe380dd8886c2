import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisSentinel, startRedisSentinel, waitFor } from '../../src/index.js';

// Redis primary + replica + 3 Sentinels from the local binary: a Sentinel client writes to the
// primary; with the primary killed the Sentinels promote the replica, the client follows, and
// the old primary restarted comes back as a replica.

let ha: RedisSentinel;
let client: Redis;

beforeAll(async () => {
  ha = await startRedisSentinel();
  client = new Redis({ sentinels: [...ha.sentinels], name: ha.name, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
}, 60_000);

afterAll(async () => {
  client?.disconnect();
  await ha?.close();
}, 60_000);

const role = async (index: 0 | 1) => {
  const direct = new Redis({ ...ha.nodes[index], lazyConnect: true, maxRetriesPerRequest: 0 });
  direct.on('error', () => {});
  try {
    await direct.connect();
    return /role:(\w+)/.exec(await direct.info('replication'))?.[1];
  } finally {
    direct.disconnect();
  }
};

describe('startRedisSentinel', () => {
  it('starts a primary, a replica in sync and 3 Sentinels agreeing on the primary', async () => {
    expect(ha.sentinels).toHaveLength(3);
    expect(await ha.primary()).toBe(0);
    expect(await role(1)).toBe('slave');
    await client.set('k', 'v');
    expect(await client.get('k')).toBe('v');
  });

  it('a killed primary: the replica is promoted, the client follows, the old primary rejoins as a replica', async () => {
    await ha.kill(0);
    await waitFor(async () => (await ha.primary()) === 1, {
      timeoutMs: 30_000,
      message: 'the Sentinels naming the replica as primary',
    });
    expect(await role(1)).toBe('master');
    await waitFor(async () => (await client.set('after', '1')) === 'OK', {
      timeoutMs: 15_000,
      message: 'the Sentinel client writing to the new primary',
    });
    await ha.start(0);
    await waitFor(async () => (await role(0)) === 'slave', {
      timeoutMs: 30_000,
      message: 'the old primary reconfigured as a replica',
    });
  }, 90_000);
});
