// Entry point for vitest `globalSetup`. vitest resolves globalSetup specifiers with Node's
// conditions (`node`, `import`), not with `source`, so this plain-JS file exists without a
// build. It loads the TypeScript source when present (this monorepo: vitest's module runner
// transforms it), else the built file (published package).
import { existsSync } from 'node:fs';

const source = new URL('../src/global-setup/postgres.ts', import.meta.url);
const mod = existsSync(source)
  ? await import(source.href)
  : await import(new URL('../dist/global-setup/postgres.js', import.meta.url).href);

export default mod.default;
