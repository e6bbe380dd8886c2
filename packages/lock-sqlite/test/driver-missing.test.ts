import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A user's app without a working SQLite driver. The lock is bundled as it is published (core and
 * sqlite-shared inside, `libsql` external) into a directory outside the workspace, so `libsql`
 * resolves only from that app's own node_modules: nothing at all, `libsql` without its platform
 * binary (`npm install --omit=optional`), or the real thing. The driver is really missing, not
 * mocked; a child process constructs the lock and reports what it got.
 */
const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const lockRequire = createRequire(join(here, '..', 'package.json'));
/** The installed driver's folder (its dependencies and binary are its siblings, pnpm or npm). */
const libsqlDir = dirname(realpathSync(lockRequire.resolve('libsql')));

let app: string;

beforeAll(async () => {
  app = mkdtempSync(join(tmpdir(), 'fleetcron-sqlite-driver-'));
  await build({
    entry: {
      index: join(here, '../src/index.ts'),
      operations: join(here, '../src/operations.ts'),
      worker: join(here, '../../sqlite-shared/src/worker.ts'),
    },
    outDir: join(app, 'lock'),
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    dts: false,
    sourcemap: false,
    clean: true,
    silent: true,
    config: false,
    esbuildOptions(options) {
      options.conditions = ['source'];
    },
    noExternal: [/^(?!libsql$)/],
  });
}, 60_000);

afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

/** Copies an installed package into the app's node_modules (a copy resolves from the app). */
function install(name: string, from: string): void {
  const target = join(app, 'node_modules', name);
  mkdirSync(dirname(target), { recursive: true });
  cpSync(from, target, { recursive: true, dereference: true });
}

const dirOf = (name: string) => realpathSync(join(libsqlDir, '..', name));

/** Constructs a `SqliteLock` on a file in a child process; answers what happened, as JSON. */
async function construct(): Promise<{
  constructed: boolean;
  name?: string;
  code?: string;
  message?: string;
  claim?: string;
}> {
  const script = `
    import { SqliteLock } from './lock/index.js';
    let lock;
    try {
      lock = new SqliteLock(${JSON.stringify(join(app, 'lock.db'))});
    } catch (error) {
      console.log(JSON.stringify({ constructed: false, name: error.name, code: error.code, message: error.message }));
      process.exit(0);
    }
    const result = await lock.claim({ key: 'k', fireAt: Math.floor(Date.now() / 1000) * 1000, owner: 'a', leaseMs: 30000, exclusive: true });
    await lock.close();
    console.log(JSON.stringify({ constructed: true, claim: result.status }));
  `;
  writeFileSync(join(app, 'construct.mjs'), script);
  const { stdout } = await run(process.execPath, ['construct.mjs'], {
    cwd: app,
    env: { ...process.env, NODE_PATH: '' },
  });
  return JSON.parse(stdout.trim());
}

// The three cases build on each other (each installs one more package), so they run in order.
describe.sequential('a missing or unloadable SQLite driver', () => {
  it('no libsql installed: a setup error at construction that names the package to install', async () => {
    const got = await construct();
    expect(got).toMatchObject({
      constructed: false,
      name: 'SqliteDriverError',
      code: 'DRIVER_LOAD_FAILED',
    });
    expect(got.message).toContain('libsql is not installed');
    expect(got.message).toContain('npm install libsql@^0.5.29');
  });

  it('libsql without its platform binary (optional dependencies omitted): names the binary and the fix', async () => {
    install('libsql', libsqlDir);
    install('@neon-rs/load', dirOf('@neon-rs/load'));
    install('detect-libc', dirOf('detect-libc'));
    const got = await construct();
    expect(got).toMatchObject({
      constructed: false,
      name: 'SqliteDriverError',
      code: 'DRIVER_LOAD_FAILED',
    });
    expect(got.message).toMatch(
      /prebuilt binary of libsql for this platform \(@libsql\/[a-z0-9-]+/,
    );
    expect(got.message).toContain('--omit=optional');
  });

  it('with the binary installed, the same bundle constructs and claims (the two cases above are real)', async () => {
    const binary = `@libsql/${process.platform}-${process.arch}-gnu`;
    install(binary, dirOf(binary));
    expect(await construct()).toEqual({ constructed: true, claim: 'won' });
  });
});
