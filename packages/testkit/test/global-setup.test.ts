import { Redis } from 'ioredis';
import pg from 'pg';
import { describe, expect, inject, it, vi } from 'vitest';
import { etcdHealthy } from '../src/etcd.js';
import { isolatedPostgres, uniquePrefix } from '../src/isolation.js';
import {
  type ProvidingProject,
  parseServerList,
  provideServers,
  serversToStart,
} from '../src/provide-servers.js';
import type { FleetcronProvidedContext } from '../src/provided-context.js';
import { portOpen } from './helpers.js';

/** A stand-in for vitest's TestProject that records what is provided. */
function fakeProject(provided: Partial<FleetcronProvidedContext> = {}) {
  const values: Record<string, unknown> = {};
  const project = {
    provide: (key: string, value: unknown) => {
      values[key] = value;
    },
    getProvidedContext: () => provided,
  } as unknown as ProvidingProject;
  return { project, values };
}

describe('global setup (this package uses it: the shared servers)', () => {
  it('provides reachable postgres, redis and etcd servers', async () => {
    const client = new pg.Client({ connectionString: inject('fleetcronPostgresUrl') });
    client.on('error', () => {});
    await client.connect();
    expect((await client.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    await client.end();

    const redis = new Redis(inject('fleetcronRedisUrl'), { maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
    expect(await redis.ping()).toBe('PONG');
    redis.disconnect();

    expect(await etcdHealthy(inject('fleetcronEtcdEndpoints')[0] as string)).toBe(true);
  });

  it('isolatedPostgres gives a database of its own and drops it', async () => {
    const url = inject('fleetcronPostgresUrl');
    const db = await isolatedPostgres(url);
    expect(db.url).toMatch(new RegExp(`/${db.database}$`));
    const client = new pg.Client({ connectionString: db.url });
    client.on('error', () => {});
    await client.connect();
    await client.query('CREATE TABLE mine (v int)');
    await db.drop(); // terminates our connection too
    await db.drop();
    await client.end().catch(() => {});
    const admin = new pg.Client({ connectionString: url });
    admin.on('error', () => {});
    await admin.connect();
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      db.database,
    ]);
    await admin.end();
    expect(rowCount).toBe(0);
  });

  it('uniquePrefix is unique and safe as a key part and an SQL identifier', () => {
    const a = uniquePrefix('Lock Redis!');
    const b = uniquePrefix('Lock Redis!');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^lock_redis_\d+_\d+_[a-z0-9]+$/);
    expect(uniquePrefix('9lives')).toMatch(/^t9lives_/);
    expect(uniquePrefix()).toMatch(/^test_/);
  });
});

describe('global setup configuration', () => {
  it('parses FLEETCRON_SERVERS and rejects unknown names', () => {
    expect(parseServerList(' postgres, redis ,postgres')).toEqual(['postgres', 'redis']);
    expect(() => parseServerList('postgres,mysql')).toThrow(/unknown server "mysql"/);
  });

  it('picks servers from the env var, then the provided config, then all three', () => {
    vi.stubEnv('FLEETCRON_SERVERS', 'etcd');
    expect(serversToStart(fakeProject({ fleetcronServers: ['redis'] }).project)).toEqual(['etcd']);
    vi.stubEnv('FLEETCRON_SERVERS', '');
    expect(serversToStart(fakeProject({ fleetcronServers: ['redis'] }).project)).toEqual(['redis']);
    expect(serversToStart(fakeProject().project)).toEqual(['postgres', 'redis', 'etcd']);
    vi.unstubAllEnvs();
  });

  it('provideServers provides the addresses and its teardown closes the servers', async () => {
    const { project, values } = fakeProject();
    const teardown = await provideServers(project, ['redis']);
    const url = values.fleetcronRedisUrl as string;
    expect(url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    expect(Object.keys(values)).toEqual(['fleetcronRedisUrl']);
    const port = Number(new URL(url).port);
    expect(await portOpen(port)).toBe(true);
    await teardown();
    expect(await portOpen(port)).toBe(false);
  });
});
