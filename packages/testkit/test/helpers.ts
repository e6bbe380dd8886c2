import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { groupMembers } from '../src/proc.js';
import { waitFor } from '../src/wait.js';

/** Pids of processes whose command line contains `pattern` (pgrep -f), excluding pgrep itself. */
export function pgrep(pattern: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', '--', pattern], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** Resolves true when something accepts TCP connections on 127.0.0.1:port. */
export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (open: boolean): void => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Waits until no process of group `pgid`, nothing matching `pattern` and no listener on `port` remain. */
export async function waitServerGone(opts: { pgid: number; pattern?: string; port?: number }) {
  await waitFor(
    async () =>
      groupMembers(opts.pgid).length === 0 &&
      (opts.pattern === undefined || pgrep(opts.pattern).length === 0) &&
      (opts.port === undefined || !(await portOpen(opts.port))),
    { timeoutMs: 20_000, message: `server group ${opts.pgid} gone` },
  );
}

export { existsSync, groupMembers };
