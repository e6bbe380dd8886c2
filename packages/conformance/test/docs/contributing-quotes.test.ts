// CONTRIBUTING.md quotes the repository: code blocks marked `<!-- quote: path -->` must be lines
// of that file, `<!-- symbols: path: a, b -->` names must occur in its code, `<!-- tree: root -->`
// entries must exist, and every repository path its prose names must exist. A quote that drifts
// from the code it shows fails here, naming the guide's line.
import { describe, expect, it } from 'vitest';
import {
  codeOf,
  containsRun,
  isIgnored,
  parseGuide,
  readRepoFile,
  repoPathExists,
} from './markdown.js';

const GUIDE = 'CONTRIBUTING.md';
const claims = parseGuide(readRepoFile(GUIDE));

describe(`${GUIDE}: what it quotes exists`, () => {
  it('quotes code, names symbols, draws the package tree and names paths (the markers are read)', () => {
    expect(claims.quotes.length).toBeGreaterThanOrEqual(5);
    expect(claims.symbols.length).toBeGreaterThanOrEqual(10);
    expect(claims.trees.length).toBeGreaterThanOrEqual(1);
    expect(claims.paths.length).toBeGreaterThanOrEqual(10);
  });

  itQuotesRealLines(GUIDE, claims.quotes);

  for (const { line, path, names } of claims.symbols) {
    it(`line ${line}: ${path} has ${names.join(', ')}`, () => {
      expect(repoPathExists(path), `${path} does not exist`).toBe(true);
      const code = codeOf(path);
      const missing = names.filter((name) => !new RegExp(`\\b${escapeRegExp(name)}\\b`).test(code));
      expect(missing, `named at ${GUIDE}:${line} but not in the code of ${path}`).toEqual([]);
    });
  }

  for (const tree of claims.trees) {
    it(`line ${tree.line}: every entry of the ${tree.root} tree exists`, () => {
      const missing = tree.entries.filter((entry) => !repoPathExists(`${tree.root}/${entry}`));
      expect(
        missing,
        `entries of the tree at ${GUIDE}:${tree.line} not under ${tree.root}`,
      ).toEqual([]);
    });
  }

  it('every repository path named in the prose exists (generated folders aside)', () => {
    const missing = claims.paths
      .filter(({ path }) => !isIgnored(path) && !repoPathExists(path))
      .map(({ line, path }) => `${GUIDE}:${line} ${path}`);
    expect(missing).toEqual([]);
  });
});

function escapeRegExp(name: string): string {
  return name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// The conformance README quotes adapters' test files the same way.
const CONFORMANCE_GUIDE = 'packages/conformance/README.md';
const conformanceQuotes = parseGuide(readRepoFile(CONFORMANCE_GUIDE)).quotes;

describe(`${CONFORMANCE_GUIDE}: what it quotes exists`, () => {
  it('quotes the first examples from real test files (the markers are read)', () => {
    expect(conformanceQuotes.length).toBeGreaterThanOrEqual(2);
  });

  itQuotesRealLines(CONFORMANCE_GUIDE, conformanceQuotes);
});

/** One test per quote of `guide`: its block is a run of lines of the file it names. */
function itQuotesRealLines(guide: string, quotes: ReturnType<typeof parseGuide>['quotes']): void {
  for (const quote of quotes) {
    it(`line ${quote.line}: the block is lines of ${quote.path}`, () => {
      expect(repoPathExists(quote.path), `${quote.path} does not exist`).toBe(true);
      expect(
        containsRun(readRepoFile(quote.path), quote.body),
        `the block after ${guide}:${quote.line} is not a run of lines of ${quote.path}: copy it again from the file`,
      ).toBe(true);
    });
  }
}
