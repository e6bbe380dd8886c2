import { resolve } from 'node:path';
import { UsageError } from './args.js';

/** The SQLite forms of `FLEETCRON_URL` (and `--sqlite`), as the bad-URL message lists them. */
export const SQLITE_URL_FORMS = 'sqlite:///absolute/path.db, sqlite:relative/path.db';

const FIX = 'use sqlite:///absolute/path.db (three slashes) or sqlite:relative/path.db';

/**
 * The file a SQLite URL names, as an absolute path. `sqlite:///var/lib/app/fleet.db` (empty host,
 * or `localhost`) and `sqlite:/var/lib/app/fleet.db` are absolute; `sqlite:fleet.db` and
 * `sqlite:./data/fleet.db` are relative to `cwd` (the directory `fleetcron` runs in). URL forms
 * are percent-decoded (`%20` is a space). `--sqlite` also takes a plain path, used as given.
 *
 * @throws UsageError for a host other than `localhost`, a query or fragment, no path, or
 * `:memory:` (a memory database holds no fleet).
 */
export function sqlitePath(value: string, cwd: string = process.cwd()): string {
  const isUrl = /^sqlite:/i.test(value);
  let path = isUrl ? value.slice('sqlite:'.length) : value;
  if (isUrl) {
    if (/[?#]/.test(path)) {
      throw new UsageError(`SQLite URL ${JSON.stringify(value)} has a query or fragment: ${FIX}`);
    }
    if (path.startsWith('//')) {
      const slash = path.indexOf('/', 2);
      const host = path.slice(2, slash === -1 ? undefined : slash);
      if (host !== '' && host.toLowerCase() !== 'localhost') {
        throw new UsageError(
          `SQLite URL ${JSON.stringify(value)} names a host (${JSON.stringify(host)}), but SQLite is a local file: ${FIX}`,
        );
      }
      path = slash === -1 ? '' : path.slice(slash);
    }
    try {
      path = decodeURIComponent(path);
    } catch {
      throw new UsageError(`SQLite URL ${JSON.stringify(value)} has a bad %-escape: ${FIX}`);
    }
  }
  if (path === '' || path === ':memory:') {
    throw new UsageError(
      `${JSON.stringify(value)} names no SQLite file (a memory database holds no fleet): ${FIX}`,
    );
  }
  return resolve(cwd, path);
}
