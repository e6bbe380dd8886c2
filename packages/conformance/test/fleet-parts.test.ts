import { describe, expect, it } from 'vitest';
import {
  fleetScenarios,
  fleetScenariosOfPart,
  runFleetConformance,
  runRestartConformance,
} from '../src/index.js';
import { memoryLockFixture } from './memory-fixture.js';

describe('runFleetConformance part: the suite split over test files', () => {
  it('the parts of a split register every scenario exactly once, in registration order', () => {
    const all = Object.values(fleetScenarios);
    expect(fleetScenariosOfPart()).toEqual(all);
    for (const of of [2, 3]) {
      const parts = Array.from({ length: of }, (_, i) =>
        fleetScenariosOfPart({ index: i + 1, of }),
      );
      for (const part of parts) expect(part.length).toBeGreaterThan(0);
      const titles = parts.flat().map((s) => s.title);
      expect(new Set(titles).size, 'no scenario in two parts').toBe(titles.length);
      expect([...titles].sort()).toEqual(all.map((s) => s.title).sort());
      expect(parts[0]![0]).toBe(all[0]);
      expect(parts[1]![0]).toBe(all[1]);
    }
  });

  it('a malformed part is an InvalidOptionError naming part', () => {
    for (const part of [
      { index: 0, of: 2 },
      { index: 3, of: 2 },
      { index: 1, of: 1 },
      { index: 1.5, of: 2 },
    ]) {
      expect(() => fleetScenariosOfPart(part)).toThrow(/part/);
      expect(() => fleetScenariosOfPart(part)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION' }),
      );
    }
  });
});

describe('knownFailures of runFleetConformance and runRestartConformance', () => {
  it('a known failure must name a fleet scenario and give a reason', () => {
    const create = memoryLockFixture();
    expect(() => runFleetConformance({ name: 'x', create, knownFailures: { nope: 'r' } })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', field: 'knownFailures.nope' }),
    );
    expect(() =>
      runFleetConformance({ name: 'x', create, knownFailures: { catchUpLatest: ' ' } }),
    ).toThrow(expect.objectContaining({ field: 'knownFailures.catchUpLatest' }));
    expect(Object.keys(fleetScenarios)).toContain('catchUpLatest');
  });

  it('a known failure of runRestartConformance must name a restart scenario and give a reason', () => {
    const create = memoryLockFixture();
    const known = (knownFailures: Record<string, string>) => () =>
      runRestartConformance({ name: 'x', create, knownFailures });
    expect(known({ catchUpLatest: 'r' })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', field: 'knownFailures.catchUpLatest' }),
    );
    expect(known({ restartManyJobsWithStore: '' })).toThrow(
      expect.objectContaining({ field: 'knownFailures.restartManyJobsWithStore' }),
    );
  });
});
