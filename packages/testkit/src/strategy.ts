import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ServerNotInstalledError } from './errors.js';
import type { ServerKind, Strategy, StrategyPreference } from './types.js';

/** Env vars naming existing servers. */
export const ENV_VARS: Record<ServerKind, string> = {
  postgres: 'FLEETCRON_TEST_POSTGRES_URL',
  redis: 'FLEETCRON_TEST_REDIS_URL',
  etcd: 'FLEETCRON_TEST_ETCD_ENDPOINTS',
};

const INSTALL: Record<ServerKind, string> = {
  postgres:
    'install the PostgreSQL 15 server (Debian/Ubuntu: apt-get install -y postgresql-15; binaries in /usr/lib/postgresql/15/bin)',
  redis: 'install Redis (Debian/Ubuntu: apt-get install -y redis-server)',
  etcd: 'install etcd 3.4+ (Debian/Ubuntu: apt-get install -y etcd-server)',
};

/** Error for "no way to run this server", saying exactly what to do. */
export function notInstalled(kind: ServerKind, detail: string): ServerNotInstalledError {
  return new ServerNotInstalledError(
    `@fleetcron/testkit cannot start ${kind}: ${detail}. Either ${INSTALL[kind]}, or set ${ENV_VARS[kind]} to an existing server, or start a Docker-compatible container runtime (with the testcontainers package installed: npm i -D testcontainers).`,
  );
}

/**
 * Cheap pre-check before importing testcontainers (about 0.6 s): any sign of a container runtime
 * that its strategies (DOCKER_HOST, ~/.testcontainers.properties, docker sockets) could use.
 */
function containerRuntimeHinted(): boolean {
  if (process.env.DOCKER_HOST) return true;
  if (Object.keys(process.env).some((k) => k.startsWith('TESTCONTAINERS_'))) return true;
  if (process.platform === 'win32') return true;
  const home = homedir();
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const files = [
    '/var/run/docker.sock',
    '/run/docker.sock',
    join(home, '.testcontainers.properties'),
    join(home, '.docker', 'run', 'docker.sock'),
    join(home, '.docker', 'desktop', 'docker.sock'),
    ...(process.env.XDG_RUNTIME_DIR ? [join(process.env.XDG_RUNTIME_DIR, 'docker.sock')] : []),
    ...(uid !== undefined ? [`/run/user/${uid}/docker.sock`] : []),
  ];
  return files.some((f) => existsSync(f));
}

let runtime: Promise<boolean> | undefined;
/** Set when a runtime was hinted but `testcontainers` (an optional peer) could not be imported. */
let testcontainersMissing = false;

/**
 * True when Testcontainers finds a working container runtime. Checked once per process;
 * testcontainers (an optional peer dependency) is imported only if a runtime is hinted.
 */
export function containerRuntimeAvailable(): Promise<boolean> {
  runtime ??= (async () => {
    if (!containerRuntimeHinted()) return false;
    let tc: typeof import('testcontainers');
    try {
      tc = await import('testcontainers');
    } catch {
      testcontainersMissing = true;
      return false;
    }
    try {
      await tc.getContainerRuntimeClient();
      return true;
    } catch {
      return false;
    }
  })();
  return runtime;
}

const PREFERENCES: StrategyPreference[] = ['auto', 'managed', 'external', 'container', 'local'];

/** Resolves the preference (option, else `FLEETCRON_TESTKIT_STRATEGY`, else `auto`) to a strategy. */
export async function chooseStrategy(
  kind: ServerKind,
  preference: StrategyPreference | undefined,
  localAvailable: () => boolean,
): Promise<Strategy> {
  const fromEnv = process.env.FLEETCRON_TESTKIT_STRATEGY as StrategyPreference | undefined;
  const pref = preference ?? (fromEnv || 'auto');
  if (!PREFERENCES.includes(pref)) {
    throw new TypeError(
      `@fleetcron/testkit: strategy ${JSON.stringify(pref)} is not one of ${PREFERENCES.join(', ')}`,
    );
  }
  const external = process.env[ENV_VARS[kind]];
  if (pref === 'external') {
    if (!external) throw notInstalled(kind, `strategy 'external' but ${ENV_VARS[kind]} is not set`);
    return 'external';
  }
  if (pref === 'auto' && external) return 'external';
  if (pref === 'local') {
    if (!localAvailable())
      throw notInstalled(kind, `strategy 'local' but no ${kind} binary was found`);
    return 'local';
  }
  if (await containerRuntimeAvailable()) return 'container';
  if (pref === 'container') {
    throw notInstalled(
      kind,
      testcontainersMissing
        ? "strategy 'container' but the optional peer dependency `testcontainers` is not installed (npm i -D testcontainers)"
        : "strategy 'container' but no working container runtime was found",
    );
  }
  if (localAvailable()) return 'local';
  throw notInstalled(kind, 'no container runtime answered and no local binary was found');
}
