import { describe, expect, it } from 'vitest';
import {
  fleetScenarios,
  fleetScenariosOfPart,
  RESTART_STORE_ENV,
  restartStoreOption,
  runFleetConformance,
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

describe('runFleetConformance knownFailures, and the store of the store-on scenarios', () => {
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

  it(`${RESTART_STORE_ENV} picks the backend's store only when set to backend`, () => {
    const store = async () => ({
      newStore: async () => Promise.reject(new Error('unused')),
      close: async () => {},
    });
    const before = process.env[RESTART_STORE_ENV];
    try {
      delete process.env[RESTART_STORE_ENV];
      expect(restartStoreOption(() => store)).toEqual({});
      process.env[RESTART_STORE_ENV] = 'backend';
      expect(restartStoreOption(() => store)).toEqual({ store });
      process.env[RESTART_STORE_ENV] = 'postgres';
      expect(() => restartStoreOption(() => store)).toThrow(
        expect.objectContaining({ field: RESTART_STORE_ENV }),
      );
    } finally {
      if (before === undefined) delete process.env[RESTART_STORE_ENV];
      else process.env[RESTART_STORE_ENV] = before;
    }
  });
});
