import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';
import { BUILT_BIN } from './built-bin.js';

/**
 * vitest global setup: builds `src/bin.ts` with tsup once per run, so the CLI tests run a built
 * `fleetcron` as a subprocess. Workspace packages (core, admin, the stores) are bundled in from
 * their sources, so no prior `pnpm build` of them is needed; the client libraries `pg`,
 * `ioredis`, `etcd3` and `libsql` stay external, as in the published package. About a second with esbuild.
 */
export default async function setup(): Promise<void> {
  await build({
    entry: { bin: fileURLToPath(new URL('../src/bin.ts', import.meta.url)) },
    outDir: dirname(BUILT_BIN),
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
    // Bundle everything but the client libraries (tsup's noExternal wins over external).
    noExternal: [/^(?!(pg|pg-native|ioredis|etcd3|libsql)$)/],
  });
}
