import type { Options } from 'tsup';

/**
 * Shared tsup settings: every package builds `src/index.ts` to ESM (`dist/index.js`) and
 * CommonJS (`dist/index.cjs`), each with its declarations (`.d.ts`, `.d.cts`). A package whose
 * code needs ESM (a vitest suite, `import.meta`) overrides `format: ['esm']`.
 */
export const baseTsup: Options = {
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  // No source maps: they pointed at src/, which is not published; dist/ is unminified and readable.
  sourcemap: false,
  clean: true,
  target: 'node20',
  splitting: false,
};
