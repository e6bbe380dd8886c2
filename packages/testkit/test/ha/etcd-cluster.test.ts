import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EtcdCluster, startEtcdCluster, waitFor } from '../../src/index.js';

// A 3-member etcd cluster from the local binary: every member answers, the leader can be found,
// and the cluster keeps serving writes when its leader is killed or frozen.

let cluster: EtcdCluster;
let client: Etcd3;

beforeAll(async () => {
  cluster = await startEtcdCluster();
  client = new Etcd3({ hosts: [...cluster.endpoints] });
}, 60_000);

/** Writes `key` through the cluster client, each try bounded (etcd3 has no default deadline). */
const put = (key: string) =>
  waitFor(
    async () => {
      const deadline = new Date(Date.now() + 1000);
      await client.put(key).value('1').options({ deadline });
      return true;
    },
    { timeoutMs: 15_000, message: `put ${key} answered` },
  );

afterAll(async () => {
  client?.close();
  await cluster?.close();
}, 60_000);

describe('startEtcdCluster', () => {
  it('starts 3 members on distinct ports that agree on one leader', async () => {
    expect(new Set(cluster.endpoints).size).toBe(3);
    const leader = await cluster.leader();
    expect(leader).toBeGreaterThanOrEqual(0);
    await client.put('k').value('v');
    expect(await client.get('k').string()).toBe('v');
  });

  it('a killed leader is replaced; the restarted member rejoins', async () => {
    const old = await cluster.leader();
    await cluster.kill(old);
    expect(cluster.members[old]?.state).toBe('stopped');
    const next = await cluster.leader(15_000);
    expect(next).not.toBe(old);
    await put('after-kill');
    await cluster.start(old);
    expect(cluster.members[old]?.state).toBe('running');
    const member = new Etcd3({ hosts: cluster.endpoints[old] as string });
    try {
      expect(await member.get('after-kill').string()).toBe('1');
    } finally {
      member.close();
    }
  }, 60_000);

  it('a frozen leader (SIGSTOP) is replaced; once resumed it serves what was written without it', async () => {
    const old = await cluster.leader();
    await cluster.pause(old);
    expect(cluster.members[old]?.state).toBe('paused');
    const next = await cluster.leader(15_000);
    expect(next).not.toBe(old);
    await put('after-pause');
    await cluster.resume(old);
    expect(cluster.members[old]?.state).toBe('running');
    const member = new Etcd3({ hosts: cluster.endpoints[old] as string });
    try {
      const read = await waitFor(
        () =>
          member
            .get('after-pause')
            .options({ deadline: new Date(Date.now() + 1000) })
            .string(),
        { timeoutMs: 15_000, message: 'the resumed member serves the write made without it' },
      );
      expect(read).toBe('1');
    } finally {
      member.close();
    }
  }, 60_000);
});
