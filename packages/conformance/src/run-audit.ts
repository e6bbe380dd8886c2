import { InvalidOptionError } from '@fleetcron/core';
import { describe, it } from 'vitest';
import { type AuditConformanceOptions, auditScenarios } from './store/audit-scenarios.js';

/**
 * Registers the audit-log conformance suite: `describe(`${name} audit conformance`)` with one
 * `it` per scenario. Every store that keeps an audit log (`listAudit`) calls it, with stores made
 * with `audit: { maxEntries }` equal to `options.maxEntries`.
 */
export function runAuditConformance(options: AuditConformanceOptions): void {
  if (options.timeScale !== undefined && !(options.timeScale > 0)) {
    throw new InvalidOptionError('timeScale', 'must be a positive number (1 = normal speed).');
  }
  if (
    !Number.isSafeInteger(options.maxEntries) ||
    options.maxEntries < 30 ||
    options.maxEntries > 1_000
  ) {
    throw new InvalidOptionError(
      'maxEntries',
      'must be the audit.maxEntries of the fixture stores, an integer from 30 to 1000 (40 suggested).',
    );
  }
  const scale = options.timeScale ?? 1;
  describe(`${options.name} audit conformance`, () => {
    for (const scenario of Object.values(auditScenarios)) {
      it(scenario.title, () => scenario.run(options), scenario.timeoutMs * scale);
    }
  });
}
