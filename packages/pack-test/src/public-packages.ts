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
 * The packages `fixture/app.ts` and `fixture/app-cjs.cts` import: installed into the fresh npm
 * project, type-checked and run as ESM and CommonJS. Each must ship both formats.
 */
export const APP_PACKAGES = new Set([
  '@fleetcron/core',
  '@fleetcron/exporter-otel',
  '@fleetcron/lock-etcd',
  '@fleetcron/lock-postgres',
  '@fleetcron/lock-redis',
  '@fleetcron/store-postgres',
  '@fleetcron/store-redis',
]);

/**
 * The packages `adapter/` (an adapter package written outside this repository) installs: what a
 * contributor needs to write a backend and run the conformance suite on it, and the Redis lock
 * its second fixture wraps. `@fleetcron/notify` and `@fleetcron/notify-email` are there as
 * dependencies of conformance (its watchdog scenarios notify through `webhookNotifier` and
 * `emailNotifier`): from the registry they come by themselves.
 */
export const ADAPTER_PACKAGES = new Set([
  '@fleetcron/conformance',
  '@fleetcron/core',
  '@fleetcron/lock-redis',
  '@fleetcron/notify',
  '@fleetcron/notify-email',
  '@fleetcron/testkit',
]);

/**
 * True when the manifest's `.` export has a `require` condition pointing at a CommonJS build
 * (`dist/index.cjs`); false for an ESM-only package, which has no `require` condition at all.
 */
export function isDualFormat(manifest: Record<string, unknown>): boolean {
  const exports = manifest.exports as Record<string, { require?: { default?: string } }>;
  const required = exports?.['.']?.require?.default;
  return typeof required === 'string' && required.endsWith('.cjs');
}

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
