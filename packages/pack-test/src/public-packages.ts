import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The monorepo root (this file is `packages/pack-test/src/public-packages.ts`). */
export const WORKSPACE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** What a workspace package's manifest says, as far as publishing goes. */
export interface WorkspacePackage {
  /** npm name, e.g. `@fleetcron/core`. */
  readonly name: string;
  /** Absolute directory. */
  readonly dir: string;
  /** The parsed `package.json`. */
  readonly manifest: Record<string, unknown>;
}

/**
 * Public packages that ship CommonJS as well as ESM. Every other public package is ESM only
 * and says so in its README (today: `@fleetcron/conformance`, a vitest suite).
 */
export const DUAL_FORMAT = new Set([
  '@fleetcron/core',
  '@fleetcron/exporter-otel',
  '@fleetcron/lock-etcd',
  '@fleetcron/lock-postgres',
  '@fleetcron/lock-redis',
  '@fleetcron/store-postgres',
  '@fleetcron/store-redis',
]);

/** Every package under `packages/` whose manifest is not `private`, sorted by name. */
export function publicPackages(): WorkspacePackage[] {
  const root = join(WORKSPACE_ROOT, 'packages');
  const found: WorkspacePackage[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = join(root, entry.name);
    let manifest: Record<string, unknown>;
    try {
      manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    } catch {
      continue; // a folder without a manifest is not a package
    }
    if (manifest.private === true) continue;
    found.push({ name: String(manifest.name), dir, manifest });
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

/** Names of the private workspace packages (none may appear in a published dependency list). */
export function privatePackageNames(): Set<string> {
  const root = join(WORKSPACE_ROOT, 'packages');
  const names = new Set<string>();
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    try {
      const manifest = JSON.parse(readFileSync(join(root, entry.name, 'package.json'), 'utf8'));
      if (manifest.private === true) names.add(String(manifest.name));
    } catch {
      // not a package
    }
  }
  return names;
}
