import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * A vitest `sequence.sequencer` that starts the named test files first, then the rest in vitest's
 * own order. For a package whose run is one long real-time file (a fleet conformance suite) beside
 * short ones, with `maxWorkers` ≥ 2: on a clean clone vitest has no durations cached and orders by
 * file size, which would start a small but long file last, after the short ones, instead of beside
 * them.
 *
 * @param names - file names (the path's last segment, e.g. `'fleet.conformance.test.ts'`), longest
 * first.
 */
export function longFilesFirst(...names: string[]): typeof BaseSequencer {
  const rank = (spec: TestSpecification): number => {
    const index = names.findIndex((name) => spec.moduleId.endsWith(`/${name}`));
    return index === -1 ? names.length : index;
  };
  return class LongFilesFirst extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const sorted = await super.sort(files);
      // Array.prototype.sort is stable: files of one rank keep vitest's order
      return [...sorted].sort((a, b) => rank(a) - rank(b));
    }
  };
}
