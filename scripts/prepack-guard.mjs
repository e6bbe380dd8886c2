#!/usr/bin/env node
// `prepack` of every public package: builds it, then refuses to pack unless every file the
// published package.json points at (exports, main, types) exists and is not empty, and the
// LICENSE is there. A pack during a concurrent build, or after a failed one, stops here instead
// of shipping a tarball without `dist/index.d.ts`.
//
// Run from the package directory (npm and pnpm run lifecycle scripts there).
// FLEETCRON_PREPACK_SKIP_BUILD=1 skips the build when the caller has just built (pack test).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.cwd();
const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
const name = manifest.name ?? dir;

if (process.env.FLEETCRON_PREPACK_SKIP_BUILD !== '1') {
  execFileSync('pnpm', ['run', 'build'], { cwd: dir, stdio: 'inherit' });
}

/** Every relative file path a manifest's exports/main/types point at. */
function targets(value, out = new Set()) {
  if (typeof value === 'string') {
    if (value.startsWith('./') && !value.includes('*')) out.add(value);
  } else if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) targets(inner, out);
  }
  return out;
}

const published = { ...manifest, ...(manifest.publishConfig ?? {}) };
const files = targets([published.exports, published.main, published.types, published.module]);
files.add('./dist/index.d.ts');
files.add('./LICENSE');
const missing = [...files].filter((file) => {
  const path = join(dir, file);
  return !existsSync(path) || statSync(path).size === 0;
});
if (missing.length > 0) {
  console.error(
    `prepack: ${name} is not ready to pack: missing or empty ${missing.join(', ')}. ` +
      'Run `pnpm --filter ' +
      name +
      ' build` (and wait for any concurrent build to finish), then pack again.',
  );
  process.exit(1);
}
if (JSON.stringify(published.exports ?? {}).includes('"source"')) {
  console.error(
    `prepack: ${name} would publish the "source" export condition (it points at src/, which is not shipped). Override "exports" in "publishConfig".`,
  );
  process.exit(1);
}
