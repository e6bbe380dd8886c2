import type { StartedTestContainer } from 'testcontainers';
import type { Lifecycle } from './handle.js';
import { waitFor } from './wait.js';

/** What to run in a container. */
export interface ContainerSpec {
  image: string;
  containerPort: number;
  /** Fixed host port, so the address survives stop/start. */
  hostPort: number;
  env?: Record<string, string>;
  command?: string[];
  /** Wait for this log line `times` times on first start; else for the listening port. */
  waitLog?: { pattern: RegExp; times: number };
  /** Readiness probe after a `start()` of a stopped container. */
  ready: (container: StartedTestContainer) => Promise<boolean>;
  startTimeoutMs: number;
}

/** A started container and the lifecycle (without `dropConnections`) of its server. */
export interface StartedServerContainer {
  host: string;
  container: StartedTestContainer;
  lifecycle: Omit<Lifecycle, 'dropConnections'>;
}

/**
 * Starts `spec` with Testcontainers (imported lazily) and maps the faults onto the container:
 * stop = `docker stop` (crash: `docker kill`), start = `docker start` + probe, pause/resume =
 * `docker pause`/`unpause` (cgroup freezer: every process), close = `docker rm -f -v`. If this
 * process is killed, Testcontainers' Ryuk sidecar removes the container.
 * Not exercised by the test suite of this repo (no container runtime on its CI machine).
 */
export async function startContainer(spec: ContainerSpec): Promise<StartedServerContainer> {
  const tc = await import('testcontainers');
  let builder = new tc.GenericContainer(spec.image)
    .withExposedPorts({ container: spec.containerPort, host: spec.hostPort })
    .withStartupTimeout(spec.startTimeoutMs)
    .withWaitStrategy(
      spec.waitLog
        ? tc.Wait.forLogMessage(spec.waitLog.pattern, spec.waitLog.times)
        : tc.Wait.forListeningPorts(),
    );
  if (spec.env) builder = builder.withEnvironment(spec.env);
  if (spec.command) builder = builder.withCommand(spec.command);
  const started = await builder.start();
  const client = await tc.getContainerRuntimeClient();
  const docker = client.container.getById(started.getId());
  return {
    host: started.getHost(),
    container: started,
    lifecycle: {
      stop: async (crash) => {
        if (crash) await docker.kill();
        else await docker.stop({ t: 10 });
      },
      start: async () => {
        await docker.start();
        await waitFor(() => spec.ready(started), {
          timeoutMs: spec.startTimeoutMs,
          message: `${spec.image} ready after start`,
        });
      },
      pause: async () => {
        await docker.pause();
      },
      resume: async () => {
        await docker.unpause();
      },
      close: async () => {
        await docker.remove({ force: true, v: true }).catch(() => {});
      },
    },
  };
}
