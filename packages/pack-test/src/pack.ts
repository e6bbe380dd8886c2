import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { cleanEnv, runOk } from './exec.js';
import { WORKSPACE_ROOT, type WorkspacePackage } from './public-packages.js';

/** A packed package, unpacked for inspection. */
export interface PackedPackage {
  /** npm name. */
  readonly name: string;
  /** Absolute path of the `.tgz`. */
  readonly tarball: string;
  /** The directory the tarball was unpacked to (holds `package/`). */
  readonly unpacked: string;
  /** The published `package.json`. */
  readonly manifest: Record<string, unknown>;
  /** Paths inside the tarball, relative to `package/`, sorted. */
  readonly files: string[];
}

/**
 * Builds the given packages (and what they depend on) with turbo, so a second run reuses the
 * cache. The `prepack` guard then only checks the output (`FLEETCRON_PREPACK_SKIP_BUILD=1`).
 */
export async function buildPackages(names: readonly string[]): Promise<void> {
  const turbo = join(WORKSPACE_ROOT, 'node_modules', '.bin', 'turbo');
  const filters = names.map((name) => `--filter=${name}`);
  await runOk(turbo, ['run', 'build', ...filters, '--output-logs=errors-only'], {
    cwd: WORKSPACE_ROOT,
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
  });
}

/** `pnpm pack` of one package into `destination` (its `prepack` guard runs), then unpacks it. */
export async function packPackage(
  pkg: WorkspacePackage,
  destination: string,
): Promise<PackedPackage> {
  const version = String(pkg.manifest.version);
  await runOk('pnpm', ['pack', '--pack-destination', destination], {
    cwd: pkg.dir,
    env: { ...process.env, FLEETCRON_PREPACK_SKIP_BUILD: '1' },
  });
  const tarball = join(
    destination,
    `${pkg.name.replace('@', '').replace('/', '-')}-${version}.tgz`,
  );
  return unpack(pkg.name, tarball, `${tarball}.d`);
}

/** Unpacks `tarball` into `into` and reads its manifest and file list. */
export async function unpack(name: string, tarball: string, into: string): Promise<PackedPackage> {
  mkdirSync(into, { recursive: true });
  await runOk('tar', ['-xzf', tarball, '-C', into], { cwd: into, env: cleanEnv() });
  const root = join(into, 'package');
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  return { name, tarball, unpacked: into, manifest, files: listFiles(root, root) };
}

function listFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...listFiles(root, path));
    else out.push(relative(root, path));
  }
  return out.sort();
}

/**
 * Re-packs an unpacked package under the next patch version (`0.1.0` -> `0.1.1`): the "newer
 * core" a user installs beside adapters that were published with an older one.
 */
export async function repackAsNextPatch(
  packed: PackedPackage,
  destination: string,
): Promise<string> {
  const manifestPath = join(packed.unpacked, 'package', 'package.json');
  const [major, minor, patch] = String(packed.manifest.version).split('.').map(Number);
  const version = `${major}.${minor}.${(patch ?? 0) + 1}`;
  writeFileSync(manifestPath, JSON.stringify({ ...packed.manifest, version }, null, 2));
  const tarball = join(
    destination,
    `${packed.name.replace('@', '').replace('/', '-')}-${version}.tgz`,
  );
  await runOk('tar', ['-czf', tarball, '-C', packed.unpacked, 'package'], {
    cwd: destination,
    env: cleanEnv(),
  });
  return tarball;
}

/** Every relative file a manifest's `exports`, `main`, `module` and `types` point at. */
export function manifestTargets(manifest: Record<string, unknown>): string[] {
  const out = new Set<string>();
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      if (value.startsWith('./')) out.add(value.slice(2));
    } else if (value && typeof value === 'object') {
      for (const inner of Object.values(value)) visit(inner);
    }
  };
  visit([manifest.exports, manifest.main, manifest.module, manifest.types]);
  return [...out].map((file) => file.replace(/^\.\//, '')).sort();
}
