import type {} from 'vitest';
import type { ServerKind } from './types.js';

/**
 * Values the testkit global setup provides to tests, read with vitest's `inject(key)`. Only the
 * servers that were started are provided: reading another key returns undefined at run time.
 */
export interface FleetcronProvidedContext {
  /** Which servers the generic global setup starts (`provide` it in vitest config). */
  fleetcronServers: ServerKind[];
  /** URL of the shared PostgreSQL server (database `postgres`). */
  fleetcronPostgresUrl: string;
  /** URL of the shared Redis server. */
  fleetcronRedisUrl: string;
  /** Client endpoints of the shared etcd server. */
  fleetcronEtcdEndpoints: string[];
}

declare module 'vitest' {
  export interface ProvidedContext extends FleetcronProvidedContext {}
}
