import { type ProvidingProject, provideServers, serversToStart } from './provide-servers.js';

export type { FleetcronProvidedContext } from './provided-context.js';

/**
 * vitest global setup (`globalSetup: ['@fleetcron/testkit/global-setup']`): starts the servers
 * chosen by {@link serversToStart} once per test run and closes them afterwards.
 */
export default function setup(project: ProvidingProject): Promise<() => Promise<void>> {
  return provideServers(project, serversToStart(project));
}
