import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Where test/global-build.ts puts the test build of the `fleetcron` bin. */
export const BUILT_BIN = fileURLToPath(
  new URL('../node_modules/.cache/fleetcron-cli-test/bin.js', import.meta.url),
);

/** What a finished `fleetcron` process printed and how it exited. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built `fleetcron` with plain `node` (no loader, no source condition), as a user's
 * shell would, and resolves when it exits. `FLEETCRON_URL` is unset unless `env` sets it.
 */
export function runFleetcron(
  args: readonly string[],
  env: Record<string, string> = {},
  timeoutMs = 20_000,
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const { FLEETCRON_URL: _url, ...rest } = process.env;
    const child = spawn(process.execPath, [BUILT_BIN, ...args], {
      env: { ...rest, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `fleetcron ${args.join(' ')} did not exit within ${timeoutMs} ms\n${stdout}\n${stderr}`,
        ),
      );
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** True when `text` looks like a JavaScript stack trace (user errors must never print one). */
export const hasStackTrace = (text: string): boolean =>
  /\n\s+at .+\(.*:\d+:\d+\)|node:internal/.test(text);
