import type { Options } from 'tsup';

/** Shared tsup settings: every package builds `src/index.ts` to ESM with declarations. */
export const baseTsup: Options = {
  entry: ['src/index.ts'],
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  splitting: false,
};
