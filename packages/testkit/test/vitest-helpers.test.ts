import { Redis } from 'ioredis';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { etcdHealthy } from '../src/etcd.js';
import {
  dedicatedRedis,
  etcdEndpoints,
  fileServer,
  perFile,
  postgresDatabase,
  redisUrl,
} from '../src/vitest/index.js';

// The per-file helpers of `@fleetcron/testkit/vitest`. Each is registered inside a describe, so
// its afterAll runs when that describe ends and the next describe can check the teardown.

async function databases(): Promise<string[]> {
  const client = new pg.Client({ connectionString: inject('fleetcronPostgresUrl') });
  client.on('error', () => {});
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database');
    return rows.map((r) => r.datname);
  } finally {
    await client.end();
  }
}

const log: string[] = [];
let databaseUrl = '';

describe('perFile and the shared-server helpers', () => {
  const value = perFile(
    async () => {
      log.push('made');
      return 42;
    },
    async (v) => {
      log.push(`torn down ${v}`);
    },
  );
  const unused = perFile(
    async () => {
      log.push('unused made');
      return 0;
    },
    () => {
      log.push('unused torn down');
    },
  );
  const server = fileServer(async () => ({
    close: async () => {
      log.push('server closed');
    },
  }));
  const url = postgresDatabase();
  const redis = redisUrl();
  const etcd = etcdEndpoints();

  it('perFile makes its value on first use, once', async () => {
    expect(log).toEqual([]);
    expect(await Promise.all([value(), value()])).toEqual([42, 42]);
    expect(log).toEqual(['made']);
    expect(await server()).toBe(await server());
    expect(unused).toBeTypeOf('function');
  });

  it('postgresDatabase: a database of its own on the shared server, the same for the file', async () => {
    databaseUrl = await url();
    expect(await url()).toBe(databaseUrl);
    const name = new URL(databaseUrl).pathname.slice(1);
    expect(name).not.toBe('postgres');
    expect(await databases()).toContain(name);
    const client = new pg.Client({ connectionString: databaseUrl });
    client.on('error', () => {});
    await client.connect();
    expect((await client.query('SELECT current_database() AS db')).rows[0].db).toBe(name);
    await client.end();
  });

  it('redisUrl and etcdEndpoints: the shared servers of the global setup', async () => {
    expect(await redis()).toBe(inject('fleetcronRedisUrl'));
    expect(await etcd()).toEqual(inject('fleetcronEtcdEndpoints'));
    expect(await etcdHealthy((await etcd())[0] as string)).toBe(true);
  });
});

describe('after the file (here: the describe) ends', () => {
  it('tears down what was made, and nothing else', async () => {
    expect(log.sort()).toEqual(['made', 'server closed', 'torn down 42']);
  });

  it('drops the database of the file', async () => {
    const name = new URL(databaseUrl).pathname.slice(1);
    expect(await databases()).not.toContain(name);
  });
});

describe('dedicatedRedis', () => {
  it('starts a server of its own per call, with fixtures on its URL and fault controls', async () => {
    const faults = dedicatedRedis(
      (url) => async () => {
        const client = new Redis(await url(), { maxRetriesPerRequest: 1 });
        client.on('error', () => {});
        return client;
      },
      { appendOnly: true },
    );
    const dedicated = await faults();
    try {
      expect(dedicated.server.url).not.toBe(inject('fleetcronRedisUrl'));
      const client = await dedicated.create();
      await client.set('k', 'v');
      await dedicated.server.restart();
      expect(await client.get('k'), 'appendOnly kept the key over the restart').toBe('v');
      client.disconnect();
    } finally {
      await dedicated.close();
    }
    expect(dedicated.server.state).toBe('closed');
  }, 60_000);
});
