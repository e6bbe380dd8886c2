import {
  Candidate,
  type CandidateOptions,
  type ElectionCandidate,
  InvalidOptionError,
} from '@fleetcron/core';

/** Makes the candidate a scenario drives; the default is core's {@link Candidate}. */
export type CandidateFactory = (options: CandidateOptions) => ElectionCandidate;

/**
 * Where a {@link CandidateFactory} lives: a module URL and its export name. A module, not a
 * function, because the freeze and kill scenarios also start candidates in child processes.
 */
export interface CandidateModule {
  /** `file:` URL (or anything `import()` accepts) of the module. */
  url: string;
  /** Name of the export that is the factory. */
  exportName: string;
}

/** The real thing: core's `Candidate`. */
export const realCandidate: CandidateFactory = (options) => new Candidate(options);

/**
 * The module of {@link realCandidate}: this file from the sources, `dist/elector-candidate.js`
 * (its own entry, free of vitest) from the built package.
 */
export const realCandidateModule: CandidateModule = {
  url: import.meta.url.endsWith('.ts')
    ? import.meta.url
    : new URL('./elector-candidate.js', import.meta.url).href,
  exportName: 'realCandidate',
};

/** Imports the factory named by `ref`; a typed error when the export is not a function. */
export async function loadCandidateFactory(ref: CandidateModule): Promise<CandidateFactory> {
  const module = (await import(ref.url)) as Record<string, unknown>;
  const factory = module[ref.exportName];
  if (typeof factory !== 'function') {
    throw new InvalidOptionError(
      'candidate',
      `${ref.url} has no function export ${JSON.stringify(ref.exportName)}; pass { url, exportName } of a CandidateFactory.`,
    );
  }
  return factory as CandidateFactory;
}
