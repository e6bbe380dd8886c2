// What the global setups do: start servers, provide their addresses to the tests. The published
// `@fleetcron/testkit/global-setup` entries export only their default setup function; these
// helpers are internal (the testkit's own tests use them).
import type { TestProject } from 'vitest/node';
import { startEtcd } from './etcd.js';
import { startPostgres } from './postgres.js';
import type { FleetcronProvidedContext } from './provided-context.js';
import { startRedis } from './redis.js';
import type { ServerKind, TestServer } from './types.js';

const KINDS: ServerKind[] = ['postgres', 'redis', 'etcd'];

/** Parses a comma-separated list such as `postgres,redis`; throws on unknown names. */
export function parseServerList(value: string): ServerKind[] {
  const kinds = value
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  for (const kind of kinds) {
    if (!KINDS.includes(kind as ServerKind)) {
      throw new TypeError(
        `@fleetcron/testkit global setup: unknown server ${JSON.stringify(kind)} in FLEETCRON_SERVERS; use ${KINDS.join(', ')}`,
      );
    }
  }
  return [...new Set(kinds as ServerKind[])];
}

/** The part of vitest's `TestProject` the setup uses. */
export type ProvidingProject = Pick<TestProject, 'provide' | 'getProvidedContext'>;

/**
 * Starts `kinds` in parallel (env-var servers are used as they are), provides their addresses
 * (`fleetcronPostgresUrl`, `fleetcronRedisUrl`, `fleetcronEtcdEndpoints`) and returns the teardown
 * that closes them. If one fails to start, the others are closed and the error is thrown.
 */
export async function provideServers(
  project: ProvidingProject,
  kinds: ServerKind[],
): Promise<() => Promise<void>> {
  const results = await Promise.allSettled(
    kinds.map((kind): Promise<TestServer> => {
      if (kind === 'postgres') return startPostgres();
      if (kind === 'redis') return startRedis();
      return startEtcd();
    }),
  );
  const servers = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const teardown = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.close()));
  };
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) {
    await teardown();
    throw failed.reason;
  }
  for (const server of servers) {
    if (server.kind === 'postgres') project.provide('fleetcronPostgresUrl', server.url);
    else if (server.kind === 'redis') project.provide('fleetcronRedisUrl', server.url);
    else project.provide('fleetcronEtcdEndpoints', server.endpoints);
  }
  return teardown;
}

/**
 * Makes a vitest global setup function that starts `kinds`. The subpath entries
 * `@fleetcron/testkit/global-setup/postgres` (`/redis`, `/etcd`) are made with it.
 */
export function createGlobalSetup(
  kinds: ServerKind[],
): (project: ProvidingProject) => Promise<() => Promise<void>> {
  return (project) => provideServers(project, kinds);
}

/**
 * The servers the generic setup starts: `FLEETCRON_SERVERS` (comma-separated) if set, else the
 * `fleetcronServers` value `provide`d in the vitest config, else all three.
 */
export function serversToStart(project: ProvidingProject): ServerKind[] {
  const fromEnv = process.env.FLEETCRON_SERVERS;
  if (fromEnv !== undefined && fromEnv.trim() !== '') return parseServerList(fromEnv);
  const provided = (project.getProvidedContext() as Partial<FleetcronProvidedContext>)
    .fleetcronServers;
  if (provided !== undefined) return parseServerList(provided.join(','));
  return [...KINDS];
}
