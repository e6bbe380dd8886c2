import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The scheduler's folders each have one door: a file outside `src/scheduler/<folder>/` imports
 * from it only through its `index.ts`, so what a folder offers the rest of core is the list in
 * that file, and anything else inside it can change without a reader outside having to know.
 */
const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
const SCHEDULER = join(SRC, 'scheduler');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The scheduler folder `path` lies in, `null` for a file outside them (or at its top). */
function folderOf(path: string): string | null {
  const parts = relative(SCHEDULER, path).split(sep);
  return parts[0] === '..' || parts.length < 2 ? null : parts[0]!;
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s*'(\.{1,2}\/[^']+)'/g;

describe('scheduler folders', () => {
  it('every folder has an index.ts and is entered only through it from outside', () => {
    const folders = readdirSync(SCHEDULER).filter((n) =>
      statSync(join(SCHEDULER, n)).isDirectory(),
    );
    expect(folders.length).toBeGreaterThan(3);
    for (const folder of folders) {
      expect(statSync(join(SCHEDULER, folder, 'index.ts')).isFile(), folder).toBe(true);
    }
    const backDoors: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const from = folderOf(file);
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        const target = resolve(dirname(file), spec!.replace(/\.js$/, '.ts'));
        const into = folderOf(target);
        if (into === null || into === from || target.endsWith(`${sep}index.ts`)) continue;
        backDoors.push(`${relative(SRC, file)} imports ${relative(SRC, target)}`);
      }
    }
    expect(backDoors, 'imports that go around a folder index.ts').toEqual([]);
  });
});
