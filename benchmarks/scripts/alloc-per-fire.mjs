/**
 * Bytes allocated per fire by the scheduler, for comparing two builds of `@fleetcron/core` side
 * by side (issue #26: the per-fire cost before and after a change). Counted, not timed, so the
 * figure does not swing with the load of a shared machine: V8's heap used at the end, minus at
 * the start, plus what every garbage collection in between freed (`v8.GCProfiler`).
 *
 * Each measurement is a fresh child process on plain Node (the built `dist/`, no tsx): `--schedulers`
 * schedulers on one `MemoryLock` and one `MemoryStore`, each with the same `--jobs` jobs on
 * `every(1 min)` (a no-op run), on a `FakeClock`; one warm-up fire, then `--fires` fires
 * measured. Every scheduler claims every fire, one runs it: the figure is per fire of one job,
 * fleet-wide (the claims of all the schedulers and the one run, history rows included).
 * Builds are measured in turn, `--rounds` times (interleaved), and the medians compared.
 *
 *   pnpm --filter @fleetcron/core build
 *   node benchmarks/scripts/alloc-per-fire.mjs --core packages/core/dist/index.js \
 *     --core /tmp/core-before/dist/index.js
 *
 * `--sites` shows where the bytes go instead, for one build, in this process: V8's sampling heap
 * profiler over the same fires (objects collected by GCs included), the sampled bytes per fire
 * summed by the core source file of the innermost core frame (the bundle's `// src/...` marks),
 * the in-memory backends' and fake clock's files apart from the scheduler's, then the top
 * allocating functions. Sampled (one sample per 256 B), so within a few % of the count above;
 * `--no-turbo-inlining` keeps an inlined callee's bytes on its own file:
 *
 *   node --expose-gc --no-turbo-inlining benchmarks/scripts/alloc-per-fire.mjs --sites \
 *     --core packages/core/dist/index.js
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';

const { values } = parseArgs({
  options: {
    core: { type: 'string', multiple: true },
    schedulers: { type: 'string', default: '4' },
    jobs: { type: 'string', default: '1000' },
    fires: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '5' },
    child: { type: 'boolean', default: false },
    sites: { type: 'boolean', default: false },
  },
});
const count = (name, min) => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}`);
  return n;
};
const schedulers = count('schedulers', 1);
const jobs = count('jobs', 1);
const fires = count('fires', 1);
const rounds = count('rounds', 1);
const cores = values.core ?? [];
if (cores.length === 0)
  throw new Error('--core <path of a built core dist/index.js> (once or more)');

if (values.sites) {
  await allocationSites(cores[0]);
} else if (values.child) {
  console.log(JSON.stringify(await measure(cores[0])));
} else {
  const perCore = new Map(cores.map((c) => [c, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const core of cores) {
      const result = await inChild(core);
      perCore.get(core).push(result.bytesPerFire);
      console.log(
        `round ${round}  ${core}: ${Math.round(result.bytesPerFire)} B per fire (${result.gcs} GCs)`,
      );
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const first = median(perCore.get(cores[0]));
  console.log(`\n${schedulers} schedulers × ${jobs} jobs, ${fires} fires, median of ${rounds}:`);
  for (const core of cores) {
    const m = median(perCore.get(core));
    console.log(`  ${Math.round(m)} B per fire  ×${(m / first).toFixed(3)}  ${core}`);
  }
}

function inChild(core) {
  const args = [
    ...['--expose-gc', new URL(import.meta.url).pathname, '--child', '--core', core],
    ...['--schedulers', String(schedulers), '--jobs', String(jobs), '--fires', String(fires)],
  ];
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('exit', (code) =>
      code === 0
        ? done(JSON.parse(out.trim().split('\n').at(-1)))
        : fail(new Error(`exit ${code}`)),
    );
  });
}

/** Sets up the fleet of `corePath`, warms it up one fire; `fleet.minute()` advances one fire. */
async function fleetOf(corePath) {
  const core = await import(pathToFileURL(resolve(corePath)).href);
  const { every, FakeClock, MemoryLock, MemoryStore, Scheduler } = core;
  const fake = new FakeClock(0);
  const lock = new MemoryLock({ clock: fake });
  const store = new MemoryStore({ clock: fake });
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  const fleet = Array.from({ length: schedulers }, (_, i) => {
    const s = new Scheduler({ lock, store, clock: fake, instanceId: `i${i}`, logger: silent });
    for (let j = 0; j < jobs; j++)
      s.add({ name: `job-${j}`, trigger: every(60_000), run: () => {} });
    return s;
  });
  for (const s of fleet) s.start();
  const minute = async () => {
    for (let t = 0; t < 60_000; t += 500) await fake.advance(500);
  };
  await minute(); // the warm-up fire
  const stop = async () => {
    for (const s of fleet) {
      const stopping = s.stop({ drainMs: 0 });
      for (let i = 0; i < 50; i++) await fake.advance(100);
      await stopping;
    }
  };
  return { minute, stop };
}

async function measure(corePath) {
  const { minute, stop } = await fleetOf(corePath);
  globalThis.gc();
  const profiler = new v8.GCProfiler();
  const before = v8.getHeapStatistics().used_heap_size;
  profiler.start();
  for (let f = 0; f < fires; f++) await minute();
  const { statistics } = profiler.stop();
  const after = v8.getHeapStatistics().used_heap_size;
  const freed = statistics.reduce(
    (sum, gc) =>
      sum + gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize,
    0,
  );
  const bytes = after - before + freed;
  await stop();
  return { bytesPerFire: bytes / (fires * jobs), gcs: statistics.length };
}

/** `--sites`: where the bytes of `--fires` fires go, by core source file and by function. */
async function allocationSites(corePath) {
  const { minute, stop } = await fleetOf(corePath);
  globalThis.gc?.();
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  for (let f = 0; f < fires; f++) await minute();
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  await stop();
  const sourceOf = bundleSources();
  const byFile = new Map();
  const byFunction = new Map();
  const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
  const walk = (node, owner) => {
    const { url, lineNumber, functionName } = node.callFrame;
    const file = (url.includes('/dist/') && sourceOf(url, lineNumber)) || owner;
    if (node.selfSize > 0) {
      add(byFile, file ?? '(outside core)', node.selfSize);
      const where = `${functionName || '(anonymous)'} ${url.split('/').at(-1)}:${lineNumber + 1}`;
      add(byFunction, where, node.selfSize);
    }
    for (const child of node.children) walk(child, file);
  };
  walk(profile.head, null);
  const perFire = (bytes) => Math.round(bytes / (fires * jobs));
  const backend = /src\/(memory-store|memory-lock|fake-clock)\.ts$/;
  let backends = 0;
  let total = 0;
  for (const [file, bytes] of byFile) {
    total += bytes;
    if (backend.test(file)) backends += bytes;
  }
  console.log(`${schedulers} schedulers × ${jobs} jobs, ${fires} fires, sampled bytes per fire:`);
  console.log(`  ${perFire(total)} in all`);
  console.log(`  ${perFire(backends)} in MemoryLock, MemoryStore and FakeClock`);
  console.log(`  ${perFire(total - backends)} in the scheduler (and the rest of core)\n`);
  const top = (map, n) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${String(perFire(v)).padStart(8)}  ${k}`);
  console.log(
    ['by source file:', ...top(byFile, 25), '', 'by function:', ...top(byFunction, 30)].join('\n'),
  );
}

/** Maps a line of a bundle in `dist/` to the `src/` file it came from (tsup's `// src/...` marks). */
function bundleSources() {
  const marks = new Map();
  return (url, line) => {
    if (!marks.has(url)) {
      const lines = readFileSync(new URL(url), 'utf8').split('\n');
      marks.set(
        url,
        lines.flatMap((text, at) => (/^\/\/ (src\/\S+)$/.exec(text) ? [[at, text.slice(3)]] : [])),
      );
    }
    let file = null;
    for (const [at, name] of marks.get(url)) {
      if (at > line) break;
      file = name;
    }
    return file;
  };
}
