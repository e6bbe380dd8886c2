import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, run, runOk } from '../src/exec.js';
import {
  buildPackages,
  manifestTargets,
  type PackedPackage,
  packPackage,
  repackAsNextPatch,
} from '../src/pack.js';
import {
  ADAPTER_PACKAGES,
  APP_PACKAGES,
  isDualFormat,
  privatePackageNames,
  publicPackages,
  WORKSPACE_ROOT,
} from '../src/public-packages.js';

const packages = publicPackages();
const names = packages.map((pkg) => pkg.name);
const FIXTURE = new URL('../fixture/', import.meta.url).pathname;
const ADAPTER_FIXTURE = new URL('../adapter/', import.meta.url).pathname;
const PACK_TEST_BIN = new URL('../node_modules/.bin/', import.meta.url).pathname;
const TSC = join(WORKSPACE_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
/** Third-party packages the app installs from the npm registry (the versions the workspace tests). */
const THIRD_PARTY = [
  'pg@8.23.1',
  '@types/pg@8.15.6',
  'ioredis@6.0.0',
  'etcd3@1.1.2',
  '@opentelemetry/api@~1.9.0', // the exporter README's install line
  '@opentelemetry/sdk-metrics@2.12.0',
  '@types/node@20.19.25',
];
/**
 * Installed into the app: the packages `fixture/app.ts` imports. The others are packed, checked
 * and linted only (conformance needs vitest to load).
 */
const INSTALLED = [...APP_PACKAGES];
/** Third-party packages of the adapter project (`adapter/`): its test runner and Redis client. */
const ADAPTER_THIRD_PARTY = ['vitest@4.1.12', 'ioredis@6.0.0', '@types/node@20.19.25'];
/** Public packages with a CommonJS build (the others are ESM only). */
const DUAL = new Set(packages.filter((pkg) => isDualFormat(pkg.manifest)).map((pkg) => pkg.name));

const packed = new Map<string, PackedPackage>();
let work = '';
let app = '';
let coreNextPatch = '';
let adapter = '';

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'fleetcron-pack-'));
  const tarballs = join(work, 'tarballs');
  await buildPackages(names);
  for (const pkg of packages) packed.set(pkg.name, await packPackage(pkg, tarballs));
  const core = packed.get('@fleetcron/core');
  if (!core) throw new Error('@fleetcron/core is not among the public packages');
  coreNextPatch = await repackAsNextPatch(core, tarballs);

  app = join(work, 'app');
  cpSync(FIXTURE, app, { recursive: true });
  cpSync(join(FIXTURE, 'app-package.json'), join(app, 'package.json'));
  const ours = INSTALLED.map((name) =>
    name === '@fleetcron/core' ? coreNextPatch : (packed.get(name)?.tarball ?? name),
  );

  // The adapter project: its own package.json, outside the workspace, on the tarballs.
  adapter = join(work, 'adapter');
  cpSync(ADAPTER_FIXTURE, adapter, { recursive: true });
  cpSync(join(ADAPTER_FIXTURE, 'adapter-package.json'), join(adapter, 'package.json'));
  const adapterOurs = [...ADAPTER_PACKAGES].map((name) => packed.get(name)?.tarball ?? name);

  await Promise.all([
    npmInstall(app, [...ours, ...THIRD_PARTY]),
    npmInstall(adapter, [...adapterOurs, ...ADAPTER_THIRD_PARTY]),
  ]);
});

/** `npm install` into `dir`, retried once: third-party packages may come from the registry. */
async function npmInstall(dir: string, specs: readonly string[]): Promise<void> {
  const install = ['install', '--no-audit', '--no-fund', '--prefer-offline', ...specs];
  const first = await run('npm', install, { cwd: dir, env: cleanEnv() });
  if (first.code !== 0) await runOk('npm', install, { cwd: dir, env: cleanEnv() });
}

afterAll(() => {
  if (work && process.env.FLEETCRON_KEEP_PACK !== '1')
    rmSync(work, { recursive: true, force: true });
});

describe('public packages', () => {
  it('include every package the fixture app imports, each with a CommonJS build', () => {
    expect(names).toContain('@fleetcron/core');
    for (const name of APP_PACKAGES) expect(DUAL).toContain(name);
    expect(DUAL.size).toBeGreaterThanOrEqual(APP_PACKAGES.size);
  });
});

describe.each(names)('the packed %s', (name) => {
  const pkg = () => packed.get(name) as PackedPackage;

  it('keeps the `source` condition in the workspace and drops it from the tarball', () => {
    const workspace = packages.find((p) => p.name === name)?.manifest as {
      exports: Record<string, Record<string, unknown>>;
    };
    expect(workspace.exports['.']?.source).toBe('./src/index.ts');
    expect(JSON.stringify(pkg().manifest)).not.toContain('"source"');
    expect(JSON.stringify(pkg().manifest)).not.toContain('src/');
  });

  it('ships LICENSE (the root one), README, repository, and every file its exports name', () => {
    const { files, manifest, unpacked } = pkg();
    expect(readFileSync(join(unpacked, 'package', 'LICENSE'), 'utf8')).toBe(
      readFileSync(join(WORKSPACE_ROOT, 'LICENSE'), 'utf8'),
    );
    expect(manifest.license).toBe('MIT');
    expect(files).toContain('README.md');
    expect(files).toContain('dist/index.d.ts');
    expect(manifest.repository).toMatchObject({
      type: 'git',
      directory: expect.stringMatching(/^packages\//),
    });
    for (const target of manifestTargets(manifest)) expect(files).toContain(target);
    if (DUAL.has(name)) {
      expect(files).toEqual(expect.arrayContaining(['dist/index.cjs', 'dist/index.d.cts']));
    }
  });

  it('ships no source map, and no dist file names one (maps would point at src/, not shipped)', () => {
    const { files, unpacked } = pkg();
    expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
    for (const file of files.filter((f) => /\.(c|m)?js$/.test(f))) {
      const text = readFileSync(join(unpacked, 'package', file), 'utf8');
      expect(text, file).not.toContain('sourceMappingURL');
    }
  });

  it('has keywords, a homepage and a bugs URL on the same repository as `repository`', () => {
    const { manifest } = pkg();
    const keywords = manifest.keywords as string[];
    expect(keywords.length).toBeGreaterThan(0);
    const repository = manifest.repository as { url: string; directory: string };
    const base = repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
    expect(base).toMatch(/^https:\/\//);
    expect(manifest.homepage).toBe(`${base}/tree/main/${repository.directory}#readme`);
    expect(manifest.bugs).toEqual({ url: `${base}/issues` });
    const folder = packages.find((p) => p.name === name)?.dir ?? '';
    expect(folder.endsWith(repository.directory)).toBe(true);
  });

  it('names @fleetcron/core as a range if it imports it, and no workspace-only or private package', () => {
    const { files, manifest, unpacked } = pkg();
    const text = JSON.stringify(manifest);
    expect(text).not.toContain('workspace:');
    const peers = (manifest.peerDependencies ?? {}) as Record<string, string>;
    const importsCore = files
      .filter((file) => /\.(c|m)?js$/.test(file))
      .some((file) =>
        /(from |import\(|require\()"@fleetcron\/core[/"]/.test(
          readFileSync(join(unpacked, 'package', file), 'utf8'),
        ),
      );
    if (importsCore && name !== '@fleetcron/core') {
      expect(peers['@fleetcron/core']).toMatch(/^\^\d+\.\d+\.\d+$/);
    } else {
      expect(peers).not.toHaveProperty('@fleetcron/core');
    }
    const runtime = { ...(manifest.dependencies ?? {}), ...peers } as Record<string, string>;
    for (const internal of privatePackageNames()) expect(runtime).not.toHaveProperty(internal);
    expect((manifest.scripts as Record<string, string> | undefined)?.prepack).toBeUndefined();
  });

  it('passes publint --strict', async () => {
    const result = await run(join(PACK_TEST_BIN, 'publint'), ['--strict', pkg().tarball], {
      cwd: work,
    });
    expect(result.code, result.stdout + result.stderr).toBe(0);
  });

  it('passes @arethetypeswrong/cli', async () => {
    const profile = DUAL.has(name) ? [] : ['--profile', 'esm-only'];
    const result = await run(join(PACK_TEST_BIN, 'attw'), [pkg().tarball, ...profile], {
      cwd: work,
    });
    expect(result.code, result.stdout + result.stderr).toBe(0);
  });
});

describe.each(names.filter((name) => !DUAL.has(name)))('the ESM-only %s', (name) => {
  const project = () => {
    const { unpacked } = packed.get(name) as PackedPackage;
    const dir = join(work, 'require-check', name.replace('/', '+'));
    cpSync(join(unpacked, 'package'), join(dir, 'node_modules', name), { recursive: true });
    return dir;
  };

  it('has no `require` export: a .cts import fails to compile, as require() fails at run time', async () => {
    const dir = project();
    writeFileSync(join(dir, 'app.cts'), `import m = require(${JSON.stringify(name)});\nvoid m;\n`);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: false,
          types: [],
          noEmit: true,
        },
        files: ['app.cts'],
      }),
    );
    const compiled = await run('node', [TSC, '-p', 'tsconfig.json'], { cwd: dir });
    expect(compiled.code).not.toBe(0);
    expect(compiled.stdout).toContain(`app.cts(1,20): error TS2307: Cannot find module '${name}'`);
    const required = await run('node', ['-e', `require(${JSON.stringify(name)})`], { cwd: dir });
    expect(required.code).toBe(1);
    expect(required.stderr).toContain('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });
});

describe('@fleetcron/exporter-otel and the OpenTelemetry SDK', () => {
  it('accepts the @opentelemetry/api range sdk-metrics 2.x accepts (the narrowest SDK range)', () => {
    const exporter = packed.get('@fleetcron/exporter-otel') as PackedPackage;
    const peers = exporter.manifest.peerDependencies as Record<string, string>;
    const sdkManifest = join(
      WORKSPACE_ROOT,
      'packages/exporter-otel/node_modules/@opentelemetry/sdk-metrics/package.json',
    );
    const sdk = JSON.parse(readFileSync(sdkManifest, 'utf8'));
    expect(sdk.version).toMatch(/^2\./);
    expect(peers['@opentelemetry/api']).toBe(sdk.peerDependencies['@opentelemetry/api']);
    expect(peers['@opentelemetry/api']).toBe('>=1.9.0 <1.10.0');
  });

  it('installs the API version its README line names, beside sdk-metrics 2.12', () => {
    const readme = readFileSync(join(WORKSPACE_ROOT, 'packages/exporter-otel/README.md'), 'utf8');
    expect(readme).toContain(
      'npm install @fleetcron/exporter-otel @fleetcron/core @opentelemetry/api@~1.9.0',
    );
    const api = JSON.parse(
      readFileSync(join(app, 'node_modules/@opentelemetry/api/package.json'), 'utf8'),
    );
    expect(api.version).toMatch(/^1\.9\.\d+$/);
  });
});

describe('a fresh npm project with the tarballs and core at the next patch version', () => {
  it('installs one copy of core, the newer patch, under adapters published with the older one', async () => {
    const listed = await runOk('npm', ['ls', '@fleetcron/core', '--all', '--json'], {
      cwd: app,
      env: cleanEnv(),
    });
    const versions = new Set(coreVersions(JSON.parse(listed.stdout)));
    expect(versions).toEqual(new Set([versionOf(coreNextPatch)]));
    const installed = JSON.parse(
      readFileSync(join(app, 'node_modules/@fleetcron/core/package.json'), 'utf8'),
    );
    expect(installed.version).toBe(versionOf(coreNextPatch));
    expect(installed.version).not.toBe(packed.get('@fleetcron/core')?.manifest.version);
  });

  it('type-checks under moduleResolution bundler', async () => {
    const result = await run('node', [TSC, '-p', 'tsconfig.bundler.json'], { cwd: app });
    expect(result.code, result.stdout + result.stderr).toBe(0);
  });

  it('type-checks and compiles under moduleResolution nodenext, then runs as ESM and as CommonJS', async () => {
    const compiled = await run('node', [TSC, '-p', 'tsconfig.nodenext.json'], { cwd: app });
    expect(compiled.code, compiled.stdout + compiled.stderr).toBe(0);

    const esm = await runOk('node', ['out/app.js'], { cwd: app });
    expect(JSON.parse(esm.stdout)).toEqual({
      format: 'esm',
      runs: expect.any(Number),
      locks: ['PostgresLock', 'RedisLock', 'EtcdLock'],
      stores: ['PostgresStore', 'RedisStore'],
      typedError: true,
      backendSameClasses: true,
      lastDayMinus3: '2026-02-25T00:00:00.000Z',
    });
    expect(JSON.parse(esm.stdout).runs).toBeGreaterThanOrEqual(2);

    const cjsSource = readFileSync(join(app, 'out/app-cjs.cjs'), 'utf8');
    expect(cjsSource).toContain('require("@fleetcron/core")');
    expect(cjsSource).toContain('require("@fleetcron/core/backend")');
    const cjs = await runOk('node', ['out/app-cjs.cjs'], { cwd: app });
    expect(JSON.parse(cjs.stdout)).toEqual({
      format: 'cjs',
      runs: expect.any(Number),
      exports: Array(6).fill('function'),
      backendSameClasses: true,
      lastDayMinus3: '2026-02-25T00:00:00.000Z',
    });
    expect(JSON.parse(cjs.stdout).runs).toBeGreaterThanOrEqual(2);
  });
});

describe('an adapter package written outside the workspace, on the tarballs', () => {
  it('resolves core, conformance and testkit (the imports of the guides) from its own node_modules', async () => {
    const specifiers = [
      '@fleetcron/core',
      '@fleetcron/core/backend',
      '@fleetcron/conformance',
      '@fleetcron/testkit',
      '@fleetcron/testkit/vitest',
      '@fleetcron/testkit/global-setup/redis',
    ];
    const script = `for (const s of ${JSON.stringify(specifiers)}) console.log(import.meta.resolve(s));`;
    const resolved = await runOk('node', ['--input-type=module', '-e', script], { cwd: adapter });
    const paths = resolved.stdout.trim().split('\n');
    expect(paths).toHaveLength(specifiers.length);
    for (const path of paths) {
      expect(path).toMatch(new RegExp(`^file://${adapter}/node_modules/@fleetcron/[a-z-]+/dist/`));
    }
  });

  it('type-checks its lock, fixtures and conformance tests (no TS2307)', async () => {
    const result = await run('node', [TSC, '-p', 'tsconfig.json'], { cwd: adapter });
    expect(result.code, result.stdout + result.stderr).toBe(0);
  });

  it('passes the whole lock suite on its own lock (MemoryLock inside) and on a testkit Redis server', async () => {
    const env = cleanEnv();
    for (const key of Object.keys(env)) if (/^VITEST/.test(key)) delete env[key];
    const vitest = join(adapter, 'node_modules', 'vitest', 'vitest.mjs');
    const reporters = ['--reporter=default', '--reporter=json', '--outputFile.json=report.json'];
    const result = await run('node', [vitest, 'run', ...reporters], { cwd: adapter, env });
    expect(result.code, result.stdout + result.stderr).toBe(0);

    const report = JSON.parse(readFileSync(join(adapter, 'report.json'), 'utf8')) as VitestReport;
    expect(report.numFailedTests).toBe(0);
    expect(report.numPendingTests + report.numTodoTests).toBe(0);
    expect(report.numPassedTests).toBe(report.numTotalTests);
    const byFile = (file: string) => {
      const found = report.testResults.find((r) => r.name.endsWith(`/test/${file}`));
      expect(found, file).toBeDefined();
      return found?.assertionResults ?? [];
    };
    const example = byFile('example.conformance.test.ts');
    const redis = byFile('redis.conformance.test.ts');
    expect(example.length).toBeGreaterThan(0);
    for (const [results, suite] of [
      [example, 'example lock conformance'],
      [redis, 'redis lock conformance'],
    ] as const) {
      expect(results.every((r) => r.status === 'passed')).toBe(true);
      expect(results.every((r) => r.ancestorTitles.includes(suite))).toBe(true);
    }
    // the same scenarios ran against both
    expect(redis.map((r) => r.title).sort()).toEqual(example.map((r) => r.title).sort());
    expect(report.numTotalTests).toBe(example.length + redis.length);
  }, 600_000);
});

describe('the adapter guides (conformance and testkit READMEs, CONTRIBUTING.md)', () => {
  it.each([
    ['packages/testkit/README.md', 'packages/pack-test/adapter/vitest.config.ts'],
    ['packages/testkit/README.md', 'packages/pack-test/adapter/test/redis-fixture.ts'],
    ['packages/testkit/README.md', 'packages/pack-test/adapter/test/redis.conformance.test.ts'],
    ['packages/conformance/README.md', 'packages/lock-postgres/test/conformance.test.ts'],
    ['packages/conformance/README.md', 'packages/store-postgres/test/conformance.test.ts'],
    ['CONTRIBUTING.md', 'packages/lock-etcd/test/conformance.test.ts'],
  ])('%s quotes %s as it is, from its first import on', (guide, file) => {
    const text = readFileSync(join(WORKSPACE_ROOT, guide), 'utf8');
    const source = readFileSync(join(WORKSPACE_ROOT, file), 'utf8');
    const code = source.slice(source.search(/^import /m)).trimEnd();
    expect(code.length).toBeGreaterThan(0);
    expect(text).toContain(code);
  });

  it('import only what the published packages export, as the adapter project resolves them', async () => {
    const quoted = guideImports([
      'packages/conformance/README.md',
      'packages/testkit/README.md',
      'CONTRIBUTING.md',
    ]);
    const specifiers = [...new Set(quoted.map((q) => q.specifier))];
    expect(specifiers).toEqual(
      expect.arrayContaining(['@fleetcron/testkit', '@fleetcron/testkit/vitest']),
    );
    for (const specifier of specifiers) {
      expect(ADAPTER_PACKAGES, specifier).toContain(specifier.split('/').slice(0, 2).join('/'));
    }
    const script = `const wanted = ${JSON.stringify(quoted)};
const missing = [];
for (const { guide, specifier, names } of wanted) {
  const m = await import(specifier);
  for (const name of names) if (!(name in m)) missing.push(guide + ': ' + name + ' from ' + specifier);
}
console.log(JSON.stringify(missing));`;
    const result = await runOk('node', ['--input-type=module', '-e', script], { cwd: adapter });
    expect(JSON.parse(result.stdout)).toEqual([]);
  });
});

describe('the prepack guard', () => {
  it('refuses to pack a package whose dist/index.d.ts is missing, saying how to fix it', async () => {
    const core = packed.get('@fleetcron/core') as PackedPackage;
    const broken = join(work, 'broken-core');
    cpSync(join(core.unpacked, 'package'), broken, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(broken, 'package.json'), 'utf8'));
    writeFileSync(join(broken, 'package.json'), JSON.stringify(manifest));
    rmSync(join(broken, 'dist', 'index.d.ts'));
    const guard = join(WORKSPACE_ROOT, 'scripts', 'prepack-guard.mjs');
    const result = await run('node', [guard], {
      cwd: broken,
      env: cleanEnv({ FLEETCRON_PREPACK_SKIP_BUILD: '1' }),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('missing or empty ./dist/index.d.ts');
    expect(result.stderr).toContain('pnpm --filter @fleetcron/core build');

    const intact = await run('node', [guard], {
      cwd: join(core.unpacked, 'package'),
      env: cleanEnv({ FLEETCRON_PREPACK_SKIP_BUILD: '1' }),
    });
    expect(intact.code, intact.stderr).toBe(0);
  });
});

/** The value imports (`import { a, b } from '@fleetcron/...'`) in the code of the given guides. */
function guideImports(
  guides: readonly string[],
): { guide: string; specifier: string; names: string[] }[] {
  const out: { guide: string; specifier: string; names: string[] }[] = [];
  for (const guide of guides) {
    const text = readFileSync(join(WORKSPACE_ROOT, guide), 'utf8');
    for (const match of text.matchAll(
      /^import (type )?\{([^}]*)\} from '(@fleetcron\/[^']+)';$/gm,
    )) {
      if (match[1]) continue; // a type-only import has nothing to find at run time
      const names = (match[2] ?? '')
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== '' && !name.startsWith('type '));
      out.push({ guide, specifier: match[3] ?? '', names });
    }
  }
  return out;
}

/** The part of vitest's JSON report (`reporters: ['json']`) the adapter test reads. */
interface VitestReport {
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults: {
    name: string;
    assertionResults: { ancestorTitles: string[]; title: string; status: string }[];
  }[];
}

/** Versions of every `@fleetcron/core` node in an `npm ls --json` tree. */
function coreVersions(tree: { dependencies?: Record<string, unknown> }): string[] {
  const out: string[] = [];
  for (const [name, node] of Object.entries(tree.dependencies ?? {})) {
    const child = node as { version?: string; dependencies?: Record<string, unknown> };
    if (name === '@fleetcron/core') out.push(String(child.version));
    out.push(...coreVersions(child));
  }
  return out;
}

function versionOf(tarball: string): string {
  return /-(\d+\.\d+\.\d+)\.tgz$/.exec(tarball)?.[1] ?? '';
}
