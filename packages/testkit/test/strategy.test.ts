import pg from 'pg';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { startEtcd } from '../src/etcd.js';
import { startPostgres } from '../src/postgres.js';
import { startRedis } from '../src/redis.js';
import { notInstalled } from '../src/strategy.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

const FAULTS = ['stop', 'start', 'restart', 'pause', 'resume', 'dropConnections'] as const;

describe('strategy: servers named by env vars (external)', () => {
  it('redis: uses FLEETCRON_TEST_REDIS_URL; every fault throws FaultsUnsupportedError', async () => {
    const url = inject('fleetcronRedisUrl');
    vi.stubEnv('FLEETCRON_TEST_REDIS_URL', url);
    const redis = await startRedis();
    expect(redis.strategy).toBe('external');
    expect(redis.url).toBe(url);
    expect(redis.version).toMatch(/^\d+\.\d+/);
    expect(redis.pid).toBeUndefined();
    for (const fault of FAULTS) {
      await expect(redis[fault]()).rejects.toMatchObject({
        code: 'FAULTS_UNSUPPORTED',
        fault,
        message: expect.stringMatching(/managed server.*FLEETCRON_TEST_REDIS_URL/),
      });
    }
    await redis.close();
    expect(redis.state).toBe('closed');
  });

  it("postgres: createDatabase works on an external server; 'managed' ignores the env var", async () => {
    const url = inject('fleetcronPostgresUrl');
    vi.stubEnv('FLEETCRON_TEST_POSTGRES_URL', url);
    const external = await startPostgres();
    expect(external.strategy).toBe('external');
    expect(external.version).toMatch(/^\d+\.\d+/);
    const dbUrl = await external.createDatabase();
    const client = new pg.Client({ connectionString: dbUrl });
    client.on('error', () => {});
    await client.connect();
    const { rows } = await client.query<{ db: string }>('SELECT current_database() AS db');
    await client.end();
    expect(dbUrl.endsWith(`/${rows[0]?.db}`)).toBe(true);
    await expect(external.pause()).rejects.toMatchObject({ code: 'FAULTS_UNSUPPORTED' });
    await external.close();

    const managed = await startPostgres({ strategy: 'managed' });
    try {
      expect(managed.strategy).toBe('local');
      expect(managed.url).not.toBe(url);
    } finally {
      await managed.close();
    }
  });

  it('etcd: FLEETCRON_TEST_ETCD_ENDPOINTS is a comma-separated list', async () => {
    const [endpoint] = inject('fleetcronEtcdEndpoints');
    vi.stubEnv('FLEETCRON_TEST_ETCD_ENDPOINTS', ` ${endpoint}, ${endpoint} `);
    const etcd = await startEtcd();
    expect(etcd.strategy).toBe('external');
    expect(etcd.endpoints).toEqual([endpoint, endpoint]);
    expect(etcd.version).toMatch(/^3\./);
    await expect(etcd.dropConnections()).rejects.toMatchObject({ code: 'FAULTS_UNSUPPORTED' });
    await etcd.close();
  });
});

describe('strategy selection errors', () => {
  it("strategy 'external' without the env var says which variable to set", async () => {
    vi.stubEnv('FLEETCRON_TEST_REDIS_URL', '');
    await expect(startRedis({ strategy: 'external' })).rejects.toMatchObject({
      code: 'SERVER_NOT_INSTALLED',
      message: expect.stringContaining('FLEETCRON_TEST_REDIS_URL'),
    });
  });

  it('FLEETCRON_TESTKIT_STRATEGY must be a known strategy', async () => {
    vi.stubEnv('FLEETCRON_TESTKIT_STRATEGY', 'bogus');
    await expect(startRedis()).rejects.toThrow(/"bogus" is not one of auto, managed/);
  });

  it('the not-installed error says exactly what to install', () => {
    expect(notInstalled('redis', 'x').message).toContain('apt-get install -y redis-server');
    expect(notInstalled('etcd', 'x').message).toContain('apt-get install -y etcd-server');
    expect(notInstalled('postgres', 'x').message).toContain('postgresql-15');
    expect(notInstalled('postgres', 'x').message).toContain('FLEETCRON_TEST_POSTGRES_URL');
    expect(notInstalled('etcd', 'x').message).toMatch(/container runtime/);
  });
});
