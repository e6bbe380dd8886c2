import { eachKey, partKey } from '@fleetcron/core/backend';
import { expect } from 'vitest';
import type { LockScenario } from '../types.js';
import { fireNear, leaseFor, using, wonLease } from '../util.js';
import { clients, req } from './helpers.js';

/** Keys the odd-keys scenario claims: unicode, separators, prefixes of each other, 512 chars. */
export const ODD_KEYS: readonly string[] = [
  'job',
  'job:1',
  'job/1',
  'job*',
  'job ',
  'JOB',
  'jo',
  'ключ 🚀 日本語',
  'with spaces and\ttab',
  'a/b/c',
  '/leading/slash',
  '{hash}tag',
  '{a}:{b}',
  'x:y:z',
  `%_\\'"\`;-- ?[]`,
  'x'.repeat(512),
  '😀'.repeat(256),
  // the scheduler's keys of a sharded fire's parts and of 'each' runs (U+001F separators)
  partKey('job', 0, 8),
  partKey('job', 7, 8),
  eachKey('job', 'instance-1'),
];

/** Scenario 14: keys are isolated from each other, whatever characters they hold. */
export const oddKeys: LockScenario = {
  title:
    'keys are isolated and odd key names work (unicode, spaces, /, {}, :, U+001F of shard keys, 512 chars)',
  timeoutMs: 30_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a, b] = await clients(fixture, 2);
      const lease = leaseFor(options.capabilities, 20_000);
      const t = fireNear(-10_000);
      const held = new Map<string, number>();
      for (const key of ODD_KEYS) {
        const won = wonLease(
          await a!.claim(req(key, t, 'a', lease)),
          `key ${JSON.stringify(key)}: the same fire time of another key is another fire`,
        );
        expect(won.key, 'the lease carries the key unchanged').toBe(key);
        held.set(key, won.token);
      }
      for (const key of ODD_KEYS) {
        expect(await b!.claim(req(key, t, 'b', lease)), `key ${JSON.stringify(key)}`).toMatchObject(
          { status: 'lost', reason: 'claimed' },
        );
        const seen = await b!.inspect(key);
        expect(seen.fires, `inspect(${JSON.stringify(key)}) sees only its own fires`).toEqual([
          { fireAt: t, owner: 'a', outcome: 'won', token: held.get(key) },
        ]);
        expect(seen.leases).toHaveLength(1);
        expect(seen.leases[0]!.key).toBe(key);
      }
      for (const key of ODD_KEYS) {
        const lease0 = (await a!.inspect(key)).leases[0]!;
        expect(await a!.release(lease0), `release ${JSON.stringify(key)}`).toBe(true);
      }
      for (const key of ODD_KEYS) expect((await b!.inspect(key)).leases).toEqual([]);
      // a lone surrogate cannot be stored the same way everywhere (UTF-8 backends would turn it
      // into U+FFFD and two keys would meet): refused before anything is sent
      for (const key of LONE_SURROGATE_KEYS) {
        const what = `key ${JSON.stringify(key)} (lone surrogate)`;
        await expect(a!.claim(req(key, t, 'a', lease)), `claim of ${what}`).rejects.toMatchObject({
          code: 'INVALID_OPTION',
          field: 'key',
        });
        await expect(a!.inspect(key), `inspect of ${what}`).rejects.toMatchObject({
          code: 'INVALID_OPTION',
          field: 'key',
        });
      }
      const replaced = await b!.inspect('job\uFFFD');
      expect(replaced.fires, 'nothing recorded under the U+FFFD spelling of a refused key').toEqual(
        [],
      );
    });
  },
};

/** Keys every lock refuses with `InvalidOptionError` naming `key`: not well-formed Unicode. */
export const LONE_SURROGATE_KEYS: readonly string[] = ['job\uD800', 'job\uDC00', '\uDBFF'];
