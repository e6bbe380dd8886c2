/**
 * Loads the SQLite driver, `libsql` (better-sqlite3's API, prebuilt binaries published on npm as
 * `@libsql/<platform>`, so nothing is compiled at install). It is loaded on first use, not imported
 * at module load, so a missing or unloadable driver is a {@link DriverLoadError} thrown where the
 * adapter is constructed, never an import crash or a `BackendUnavailableError` per fire. Imports
 * nothing from `@fleetcron/core`: worker threads call it.
 */
import { createRequire } from 'node:module';
import type Libsql from 'libsql';

/** The driver's `Database` constructor. */
export type SqliteDriver = typeof Libsql;

/** npm name and version range of the driver, as the adapters' peer dependency states it. */
export const DRIVER_PACKAGE = 'libsql';
export const DRIVER_RANGE = '^0.5.29';

/** `name` of the error the driver loader throws (it crosses the worker boundary by name). */
export const DRIVER_LOAD_ERROR = 'SqliteDriverLoadError';

/** The driver could not be loaded; `message` says why and what to run. */
export class DriverLoadError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause });
    this.name = DRIVER_LOAD_ERROR;
  }
}

const loaded = new Map<string, SqliteDriver>();

/**
 * Loads `libsql`, resolved from `from` (a file URL or path; default: this module). Throws
 * {@link DriverLoadError} naming the fix when the package or its platform binary is missing or
 * cannot be loaded.
 */
export function loadDriver(from: string | URL = import.meta.url): SqliteDriver {
  const key = String(from);
  const cached = loaded.get(key);
  if (cached) return cached;
  let driver: SqliteDriver;
  try {
    driver = createRequire(from)(DRIVER_PACKAGE) as SqliteDriver;
  } catch (error) {
    throw new DriverLoadError(explain(error), error);
  }
  loaded.set(key, driver);
  return driver;
}

function explain(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  const install = `npm install ${DRIVER_PACKAGE}@${DRIVER_RANGE}`;
  if (code === 'MODULE_NOT_FOUND') {
    const missing = /Cannot find module '([^']+)'/.exec(message)?.[1];
    if (missing === DRIVER_PACKAGE) {
      return `the SQLite driver ${DRIVER_PACKAGE} is not installed (it is a peer dependency of @fleetcron/lock-sqlite and @fleetcron/store-sqlite). Run \`${install}\` (or pnpm add / yarn add) in your app.`;
    }
    if (missing?.startsWith('@libsql/')) {
      return `the prebuilt binary of ${DRIVER_PACKAGE} for this platform (${missing}, an optional dependency of ${DRIVER_PACKAGE}) is not installed. Reinstall without --omit=optional / --no-optional (\`${install}\`); ${DRIVER_PACKAGE} ships binaries for linux x64/arm64 (glibc, musl), macOS x64/arm64 and Windows x64.`;
    }
  }
  return `the SQLite driver ${DRIVER_PACKAGE} could not be loaded (${message}). Reinstall it for this platform and Node version: \`${install}\`.`;
}
