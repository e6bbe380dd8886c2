import type { Lifecycle } from './handle.js';
import { LocalProcess, type LocalProcessSpec } from './local-process.js';
import { freePort } from './ports.js';
import type { ServerDir } from './temp-dir.js';

/** Matches the bind failures of postgres, redis and etcd. */
const BIND_FAILURE = /address already in use|could not bind|could not create listen socket/i;

/**
 * Picks free port(s) and starts the process `build(ports)` describes; retries with new ports (up to
 * 3 attempts) when another process took a port in between. On failure removes `dir` and throws.
 */
export async function startLocal(
  dir: ServerDir,
  portCount: number,
  build: (ports: number[]) => LocalProcessSpec,
): Promise<{ process: LocalProcess; ports: number[] }> {
  for (let attempt = 1; ; attempt++) {
    const ports: number[] = [];
    while (ports.length < portCount) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    const proc = new LocalProcess(build(ports));
    try {
      await proc.start();
      return { process: proc, ports };
    } catch (error) {
      if (attempt < 3 && BIND_FAILURE.test(proc.tail())) continue;
      dir.remove();
      throw error;
    }
  }
}

/** The lifecycle of a local server process and its temp dir. */
export function localLifecycle(
  proc: LocalProcess,
  dir: ServerDir,
  dropConnections: () => Promise<void>,
): Lifecycle {
  return {
    stop: (crash) => proc.stop(crash),
    start: () => proc.start(),
    pause: () => proc.pause(),
    resume: async () => proc.resume(),
    dropConnections,
    close: async () => {
      try {
        await proc.kill();
      } finally {
        dir.remove();
      }
    },
    get pid() {
      return proc.pgid;
    },
    dir: dir.path,
  };
}
