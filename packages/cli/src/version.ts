import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NAME = '@fleetcron/cli';

/**
 * The version of `@fleetcron/cli`, read from its package.json: the nearest one named
 * `@fleetcron/cli` above this module (`dist/` in the published package, or a test build inside
 * the package folder).
 */
export function cliVersion(from: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      if (manifest.name === NAME && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // no package.json here: look further up
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`${NAME}: cannot find its own package.json`);
    dir = parent;
  }
}
