import { describe, expect, it } from 'vitest';
import { isBusy, retryBusy } from '../src/busy-retry.js';

const busy = (code = 'SQLITE_BUSY') => Object.assign(new Error('database is locked'), { code });

describe('retryBusy', () => {
  it('recognises SQLITE_BUSY and its extended codes only', () => {
    expect(isBusy(busy())).toBe(true);
    expect(isBusy(busy('SQLITE_BUSY_SNAPSHOT'))).toBe(true);
    expect(isBusy(busy('SQLITE_LOCKED'))).toBe(false);
    expect(isBusy(new Error('no code'))).toBe(false);
    expect(isBusy(null)).toBe(false);
  });

  it('retries a transaction that met SQLITE_BUSY until it goes through', () => {
    let calls = 0;
    const result = retryBusy(() => {
      calls += 1;
      if (calls < 4) throw busy();
      return 'committed';
    }, 1_000);
    expect(result).toBe('committed');
    expect(calls).toBe(4);
  });

  it('rethrows other errors at once, without retrying', () => {
    let calls = 0;
    const failure = Object.assign(new Error('constraint'), { code: 'SQLITE_CONSTRAINT' });
    expect(() =>
      retryBusy(() => {
        calls += 1;
        throw failure;
      }, 1_000),
    ).toThrow(failure);
    expect(calls).toBe(1);
  });

  it('gives up with the busy error once the timeout has passed', () => {
    const started = performance.now();
    let calls = 0;
    expect(() =>
      retryBusy(() => {
        calls += 1;
        throw busy();
      }, 30),
    ).toThrow('database is locked');
    expect(performance.now() - started).toBeGreaterThanOrEqual(30);
    expect(calls).toBeGreaterThan(1);
  });
});
