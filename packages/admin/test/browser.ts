import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Debian's Chromium (`apt-get install -y chromium`); playwright-core downloads no browser. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Launches headless Chromium with a fresh profile directory and the flags that keep it from
 * dialling hosts this machine cannot reach, plus `extraArgs` (e.g. `--host-resolver-rules`).
 * `close()` ends it and removes the profile.
 */
export async function launchBrowser(extraArgs: readonly string[] = []): Promise<{
  context: BrowserContext;
  close(): Promise<void>;
}> {
  const profile = mkdtempSync(join(tmpdir(), 'fleetcron-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 800 },
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        ...extraArgs,
      ],
    });
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw new Error(
      `cannot start Chromium at ${CHROMIUM}: install Debian's build with \`apt-get install -y chromium\` (.ci/run does). ${(error as Error).message}`,
    );
  }
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes (then throws `what`). */
export async function until<T>(
  what: string,
  check: () => Promise<T> | T,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
