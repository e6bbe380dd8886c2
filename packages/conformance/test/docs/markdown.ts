import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root folder (this file is `packages/conformance/test/docs/markdown.ts`). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/** A check a guide asks for, with the line of the guide that asks. */
export interface DocClaim {
  /** 1-based line of the marker or span in the guide. */
  readonly line: number;
}

/** `<!-- quote: path -->` before a fenced block: the block is a run of lines of `path`. */
export interface QuoteClaim extends DocClaim {
  readonly path: string;
  readonly body: readonly string[];
}

/** `<!-- symbols: path: a, b -->`: each name occurs in the code of `path`. */
export interface SymbolsClaim extends DocClaim {
  readonly path: string;
  readonly names: readonly string[];
}

/** `<!-- tree: root -->` before a fenced tree: every entry exists under `root`. */
export interface TreeClaim extends DocClaim {
  readonly root: string;
  readonly entries: readonly string[];
}

/** A repository path named in prose (an inline code span or a link). */
export interface PathClaim extends DocClaim {
  readonly path: string;
}

/** The claims one guide makes about the repository's files. */
export interface GuideClaims {
  readonly quotes: QuoteClaim[];
  readonly symbols: SymbolsClaim[];
  readonly trees: TreeClaim[];
  readonly paths: PathClaim[];
}

const MARKER = /^<!--\s*(quote|symbols|tree):\s*(.+?)\s*-->$/;
const FENCE = /^(```|~~~)/;

/** Reads a file of the repository as text. */
export function readRepoFile(path: string): string {
  return readFileSync(join(REPO_ROOT, path), 'utf8');
}

/** Whether `path` (relative to the repository root) exists. */
export function repoPathExists(path: string): boolean {
  return existsSync(join(REPO_ROOT, path));
}

/**
 * Parses a guide's markers and the repository paths its prose names. A marker applies to the
 * fenced block that follows it (`quote`, `tree`) or stands alone (`symbols`). Prose paths are
 * inline code spans and link targets outside fenced blocks and comments (see `pathsInProse`).
 */
export function parseGuide(text: string): GuideClaims {
  const lines = text.split('\n');
  const claims: GuideClaims = { quotes: [], symbols: [], trees: [], paths: [] };
  const topLevel = new Set(readdirSync(REPO_ROOT));
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const marker = MARKER.exec(line.trim());
    if (marker) {
      const [, kind, arg] = marker as unknown as [string, string, string];
      if (kind === 'symbols') {
        const colon = arg.lastIndexOf(':');
        const path = arg.slice(0, colon).trim();
        const names = arg
          .slice(colon + 1)
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean);
        claims.symbols.push({ line: i + 1, path, names });
        continue;
      }
      const block = fencedBlockAfter(lines, i + 1);
      if (kind === 'quote') claims.quotes.push({ line: i + 1, path: arg, body: block });
      else claims.trees.push({ line: i + 1, root: arg, entries: treeEntries(block) });
      continue;
    }
    if (FENCE.test(line.trim())) {
      i = closingFence(lines, i);
      continue;
    }
    for (const path of pathsInProse(line, topLevel)) claims.paths.push({ line: i + 1, path });
  }
  return claims;
}

/** The lines of the fenced block starting at or after `from` (blank lines skipped). */
function fencedBlockAfter(lines: readonly string[], from: number): string[] {
  let start = from;
  while (start < lines.length && (lines[start] as string).trim() === '') start++;
  if (!FENCE.test((lines[start] ?? '').trim())) {
    throw new Error(`line ${from}: a quote or tree marker must be followed by a fenced block`);
  }
  const end = closingFence(lines, start);
  return lines.slice(start + 1, end);
}

/** Index of the fence closing the block opened at `open`. */
function closingFence(lines: readonly string[], open: number): number {
  for (let i = open + 1; i < lines.length; i++) {
    if (FENCE.test((lines[i] as string).trim())) return i;
  }
  throw new Error(`line ${open + 1}: a fenced block is never closed`);
}

/**
 * Paths of a tree drawn with two-space indentation: the first line is the root folder, each
 * entry's first word its name (a trailing `/` marks a folder whose entries are indented below).
 */
function treeEntries(block: readonly string[]): string[] {
  const entries: string[] = [];
  const folders: string[] = [];
  for (const line of block.slice(1)) {
    if (line.trim() === '') continue;
    const depth = Math.floor((line.length - line.trimStart().length) / 2) - 1;
    const name = line.trim().split(/\s+/)[0] as string;
    folders.length = Math.max(0, depth);
    const path = [...folders, name.replace(/\/$/, '')].join('/');
    entries.push(path);
    if (name.endsWith('/')) folders.push(name.replace(/\/$/, ''));
  }
  return entries;
}

/**
 * Repository paths named in one line of prose: spans and link targets with a `/` whose first
 * segment is a top-level entry of the repository. (A bare file name is ambiguous; a guide that
 * relies on one names it in a `symbols` marker, which fails when the file is gone.)
 */
function pathsInProse(line: string, topLevel: ReadonlySet<string>): string[] {
  if (line.trim().startsWith('<!--')) return [];
  const candidates = [
    ...[...line.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string),
    ...[...line.matchAll(/\]\(([^)\s#]+)(#[^)]*)?\)/g)].map((m) => m[1] as string),
  ];
  return candidates
    .filter((candidate) => !/[\s<>*{}'"]/.test(candidate) && !/^[a-z]+:/.test(candidate))
    .map((candidate) => candidate.replace(/\/$/, ''))
    .filter((path) => path.includes('/') && topLevel.has(path.split('/')[0] as string));
}

/** Whether `path` lies under a folder the root `.gitignore` names (generated, never committed). */
export function isIgnored(path: string): boolean {
  const ignored = readRepoFile('.gitignore')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.includes('/') && !line.startsWith('#'));
  return ignored.some((entry) => path === entry || path.startsWith(`${entry}/`));
}

/**
 * The text of a source file without its comments, so that a name counts only where code uses it
 * (JSON and other data files are returned as they are).
 */
export function codeOf(path: string): string {
  const text = readRepoFile(path);
  if (!/\.(ts|cts|mts|js|mjs|cjs)$/.test(path)) return text;
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** Whether `lines` appear in `file` as a run of consecutive lines (trailing spaces ignored). */
export function containsRun(file: string, lines: readonly string[]): boolean {
  const have = file.split('\n').map((line) => line.trimEnd());
  const want = lines.map((line) => line.trimEnd());
  if (want.length === 0) return false;
  for (let i = 0; i + want.length <= have.length; i++) {
    if (want.every((line, k) => have[i + k] === line)) return true;
  }
  return false;
}

/** Markdown files of the repository a reader follows links through (no `node_modules`). */
export function guideFiles(): string[] {
  const files = ['README.md', 'CONTRIBUTING.md'];
  for (const folder of ['docs', 'packages', 'benchmarks', 'examples']) {
    collect(join(REPO_ROOT, folder), files);
  }
  return files.filter((file) => repoPathExists(file));
}

function collect(folder: string, into: string[]): void {
  if (!existsSync(folder)) return;
  for (const name of readdirSync(folder)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(folder, name);
    if (relative(REPO_ROOT, path) === join('docs', 'api')) continue;
    if (statSync(path).isDirectory()) collect(path, into);
    else if (name.endsWith('.md') && name !== 'CHANGELOG.md') into.push(relative(REPO_ROOT, path));
  }
}

/** A relative link of a markdown file, with its line. */
export interface MarkdownLink {
  readonly line: number;
  /** The path part, `''` for a link to a heading of the same file. */
  readonly path: string;
  /** The anchor without `#`, or `null`. */
  readonly anchor: string | null;
}

/** Relative links (and images) outside fenced blocks and inline code. */
export function relativeLinks(text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (FENCE.test(line.trim())) {
      i = closingFence(lines, i);
      continue;
    }
    const prose = line.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1] as string;
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue;
      const hash = target.indexOf('#');
      links.push({
        line: i + 1,
        path: hash === -1 ? target : target.slice(0, hash),
        anchor: hash === -1 ? null : target.slice(hash + 1),
      });
    }
  }
  return links;
}

/** The anchors GitHub gives the headings of `text` (duplicates get `-1`, `-2`, ...). */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (FENCE.test(line.trim())) {
      i = closingFence(lines, i);
      continue;
    }
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const slug = (heading[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}
