import { execFile } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** True when `file` exists and is executable. */
function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Finds `name` on PATH, then in `extraDirs`. */
export function findBinary(name: string, extraDirs: string[] = []): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...extraDirs];
  for (const dir of dirs) {
    const file = join(dir, name);
    if (executable(file)) return file;
  }
  return undefined;
}

/**
 * The directory holding `postgres` and `initdb`: `FLEETCRON_TESTKIT_PG_BIN`, PATH, then the
 * Debian/Ubuntu (`/usr/lib/postgresql/N/bin`, newest first), RHEL and Homebrew layouts.
 */
export function findPostgresBinDir(): string | undefined {
  const candidates: string[] = [];
  const fromEnv = process.env.FLEETCRON_TESTKIT_PG_BIN;
  if (fromEnv) candidates.push(fromEnv);
  candidates.push(...(process.env.PATH ?? '').split(delimiter).filter(Boolean));
  // Debian/Ubuntu: /usr/lib/postgresql/15/bin; RHEL: /usr/pgsql-15/bin. Newest version first.
  for (const [parent, prefix] of [
    ['/usr/lib/postgresql', ''],
    ['/usr', 'pgsql-'],
  ] as const) {
    try {
      const found = readdirSync(parent)
        .filter((d) => d.startsWith(prefix) && /^\d+(\.\d+)?$/.test(d.slice(prefix.length)))
        .sort((a, b) => Number(b.slice(prefix.length)) - Number(a.slice(prefix.length)));
      for (const d of found) candidates.push(join(parent, d, 'bin'));
    } catch {
      // layout not present
    }
  }
  candidates.push('/usr/local/pgsql/bin', '/opt/homebrew/bin', '/usr/local/bin');
  return candidates.find(
    (dir) => executable(join(dir, 'postgres')) && executable(join(dir, 'initdb')),
  );
}

const versions = new Map<string, Promise<string>>();

/** Runs `binary --version` once and extracts the first `x.y[.z]`; `unknown` on failure. */
export function binaryVersion(binary: string): Promise<string> {
  let version = versions.get(binary);
  if (!version) {
    version = new Promise((resolve) => {
      execFile(binary, ['--version'], { timeout: 10_000 }, (error, stdout) => {
        const match = /(\d+\.\d+(?:\.\d+)?)/.exec(error ? '' : stdout);
        resolve(match?.[1] ?? 'unknown');
      });
    });
    versions.set(binary, version);
  }
  return version;
}

/** uid/gid of a local user from /etc/passwd, or undefined. */
export function lookupUser(name: string): { uid: number; gid: number } | undefined {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [user, , uid, gid] = line.split(':');
      if (user === name && uid !== undefined && gid !== undefined) {
        return { uid: Number(uid), gid: Number(gid) };
      }
    }
  } catch {
    // no /etc/passwd
  }
  return undefined;
}

/** `setpriv` (util-linux) for `--pdeathsig` and dropping root, when present. */
export const setprivPath: string | undefined = findBinary('setpriv', ['/usr/bin', '/bin']);

/** `perl`, used to put each server into its own process group in our session. */
export const perlPath: string | undefined = findBinary('perl', ['/usr/bin', '/bin']);
