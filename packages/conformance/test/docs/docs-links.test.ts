// Relative links of the repository's guides (READMEs, CONTRIBUTING.md, docs/) point at files that
// exist, and their anchors at headings of the target, so text moved between pages keeps its links.
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  guideFiles,
  headingAnchors,
  isIgnored,
  readRepoFile,
  relativeLinks,
  repoPathExists,
} from './markdown.js';

const files = guideFiles();

describe('relative links in the guides', () => {
  it('reads the guides (the root README, CONTRIBUTING.md, package READMEs, docs/)', () => {
    expect(files).toContain('README.md');
    expect(files).toContain('packages/core/README.md');
    expect(files.filter((file) => file.startsWith('docs/')).length).toBeGreaterThan(3);
  });

  for (const file of files) {
    it(`${file}: every relative link resolves`, () => {
      const broken: string[] = [];
      for (const link of relativeLinks(readRepoFile(file))) {
        const target = link.path === '' ? file : normalize(join(dirname(file), link.path));
        const where = `${file}:${link.line} (${link.path}${link.anchor ? `#${link.anchor}` : ''})`;
        if (isIgnored(target)) continue;
        if (!repoPathExists(target)) {
          broken.push(`${where}: no such file`);
          continue;
        }
        if (link.anchor && target.endsWith('.md')) {
          if (!headingAnchors(readRepoFile(target)).has(link.anchor)) {
            broken.push(`${where}: no heading with that anchor`);
          }
        }
      }
      expect(broken).toEqual([]);
    });
  }
});
