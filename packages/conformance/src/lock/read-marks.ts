import {
  type BatchOptions,
  isFleetcronError,
  type Lock,
  type LockCapabilities,
  type MarkReading,
} from '@fleetcron/core';
import { expect } from 'vitest';
import type { LockScenario, LockScenarioOptions } from '../types.js';
import { fireNear, leaseFor, spyOnCrashes, using, wonLease } from '../util.js';
import { catchUpReq } from './catch-up.js';
import { batchClaimerOf, claimInBatches } from './claim-many-support.js';
import { clients, req } from './helpers.js';
import { ODD_KEYS } from './keys.js';

/** `lock.readMarks`, bound to the lock. */
type MarkReader = (keys: readonly string[], options?: BatchOptions) => Promise<MarkReading>;

/**
 * Keys of the bulk part: more than one etcd transaction (128 reads) and one Redis script call
 * hold, spread over many Redis Cluster slots (`{}` hash tags included). Every third is never
 * claimed.
 */
const BULK_KEYS = Array.from({ length: 300 }, (_, i) =>
  i % 10 === 0 ? `marks/{${i}}` : i % 10 === 5 ? `marks {m${i % 7}} ${i}` : `marks ${i}`,
);

/** The rejection of `call` (a synchronous throw counts), or `null` when it resolves. */
async function rejectionOf(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call();
    return null;
  } catch (error) {
    return error;
  }
}

/** Asserts `error` is a fleetcron error with `code` (and, when given, naming `field`). */
function expectError(error: unknown, code: string, what: string, field?: string): void {
  const described =
    error instanceof Error ? `${error.name}: ${error.message}` : `no error (${String(error)})`;
  expect(
    isFleetcronError(error) && error.code === code,
    `${what}: expected ${code}, got ${described}`,
  ).toBe(true);
  if (field !== undefined) {
    expect((error as { field?: unknown }).field, `${what}: the error names the field`).toBe(field);
  }
}

/** The lock reports the backend's time: `clock: 'backend'`, or an estimate (`backendTimeBoundMs`). */
function reportsBackendTime(capabilities: LockCapabilities): boolean {
  return capabilities.clock === 'backend' || capabilities.backendTimeBoundMs !== undefined;
}

/** Reads `keys` and checks the answer's shape and its `backendTime` against this host's clock. */
async function readChecked(
  options: LockScenarioOptions,
  read: MarkReader,
  keys: readonly string[],
  what: string,
  batch?: BatchOptions,
): Promise<(number | null)[]> {
  const sentAt = Date.now();
  const reading = await read(keys, batch);
  const receivedAt = Date.now();
  expect(Array.isArray(reading?.marks), `${what}: answers { marks: [...] }`).toBe(true);
  expect(reading.marks, `${what}: one mark per key`).toHaveLength(keys.length);
  const time = reading.backendTime;
  if (reportsBackendTime(options.capabilities)) {
    expect(time, `${what} carries the backend's time (backendTime)`).toBeTypeOf('number');
  }
  if (time !== undefined) {
    // one host, one clock: the backend read its clock after the request left, before the answer
    const bound = (options.capabilities.backendTimeBoundMs ?? 0) + 1;
    expect(time, `${what}: backendTime is not before the read was sent`).toBeGreaterThanOrEqual(
      sentAt - bound,
    );
    expect(time, `${what}: backendTime is not after the answer came`).toBeLessThanOrEqual(
      receivedAt + bound,
    );
  }
  return reading.marks;
}

/** What `inspect` answers as the mark of each key, one key after the other (the oracle). */
async function inspectedMarks(lock: Lock, keys: readonly string[]): Promise<(number | null)[]> {
  const unique = new Map<string, number | null>();
  for (const key of keys) {
    if (!unique.has(key)) unique.set(key, (await lock.inspect(key)).mark);
  }
  return keys.map((key) => unique.get(key) ?? null);
}

/** Asserts `marks[i]` equals `expected[i]`, naming the first key where they differ. */
function expectSameMarks(
  keys: readonly string[],
  marks: readonly (number | null)[],
  expected: readonly (number | null)[],
  what: string,
): void {
  const i = keys.findIndex((_, j) => marks[j] !== expected[j]);
  const where =
    i < 0
      ? ''
      : ` (first difference at keys[${i}] = ${JSON.stringify(keys[i])}: readMarks ${String(marks[i])}, inspect ${String(expected[i])})`;
  expect(i, `${what}: marks[i] is inspect(keys[i]).mark for every i${where}`).toBe(-1);
}

/**
 * Claims the fires whose marks the scenario reads, through `a`: a won exclusive fire, a busy
 * one, a lost re-claim, per-fire leases out of order, a withdrawn claim, a catch-up claim past
 * the window (locks with a mark), the odd keys, and two thirds of the bulk keys (through
 * `claimMany` when the lock has it). Answers the fire the scenario later moves `won`'s mark past.
 */
async function claimFires(a: Lock, b: Lock, capabilities: LockCapabilities): Promise<number> {
  const L = leaseFor(capabilities, 60_000);
  const t = fireNear(-30_000);
  wonLease(await a.claim(req('rm won', t - 20_000, 'a', L)), 'rm won');
  wonLease(await a.claim(req('rm busy', t - 20_000, 'a', L)), 'rm busy, first fire');
  const busy = await b.claim(req('rm busy', t - 10_000, 'b', L));
  expect(busy.status, 'a second exclusive fire while the lease lives').toBe('busy');
  wonLease(await a.claim(req('rm lost', t - 5000, 'a', L)), 'rm lost, first claim');
  const lost = await b.claim(req('rm lost', t - 5000, 'b', L));
  expect(lost.status, 'the same fire claimed by another owner').toBe('lost');
  wonLease(await a.claim(req('rm per-fire', t, 'a', L, false)), 'rm per-fire, newest');
  wonLease(await b.claim(req('rm per-fire', t - 3000, 'b', L, false)), 'rm per-fire, older');
  const withdrawn = wonLease(await a.claim(req('rm withdrawn', t, 'a', L)), 'rm withdrawn');
  if (a.withdraw) await a.withdraw(withdrawn);
  if (capabilities.durableMark !== undefined) {
    const now = Date.now();
    const missed = now - 20 * 60_000;
    wonLease(
      await a.claim(catchUpReq('rm catch-up', missed, 'a', L, now - 30 * 60_000)),
      'a catch-up claim of a fire past the window',
    );
  }
  for (const [i, key] of ODD_KEYS.entries()) {
    wonLease(await a.claim(req(key, t - i * 1000, 'a', L, false)), `odd key ${i}`);
  }
  const bulk = BULK_KEYS.flatMap((key, i) =>
    i % 3 === 0 ? [] : [req(key, t - (i % 7) * 1000, 'a', L, i % 2 === 0)],
  );
  const claimer = batchClaimerOf(a);
  const answers = claimer
    ? await claimInBatches(claimer, bulk)
    : await Promise.all(bulk.map((r) => a.claim(r)));
  for (const [i, r] of answers.entries()) wonLease(r, `bulk claim ${bulk[i]!.key}`);
  return t;
}

/**
 * Scenario: `readMarks(keys).marks[i]` is what `inspect(keys[i]).mark` answers, for every i,
 * read through another client: keys with won, busy, lost, per-fire, withdrawn and catch-up
 * claims, a key never claimed, repeated keys, odd keys and 300 bulk keys (more than one etcd
 * transaction or Redis script call), and again after a claim moved one mark (no stale answer).
 * `backendTime` is present where the lock reports the backend's time, and lies between the
 * read's sending and its answer. `[]` answers `{ marks: [] }`. A lone surrogate anywhere in the
 * keys (after the first 128 too) or a non-string key is refused with `INVALID_OPTION` naming
 * `key`; an aborted signal rejects `BACKEND_UNAVAILABLE`; nothing crashes the process. A lock
 * without `readMarks` passes after checking that it has none.
 */
export const readMarksMatchInspect: LockScenario = {
  title:
    'readMarks: marks[i] is inspect(keys[i]).mark (won, busy, catch-up, never claimed, repeated, 300 keys), backendTime at the read; bad keys and aborted signals refused',
  timeoutMs: 120_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a, b] = (await clients(fixture, 2)) as [Lock, Lock];
      const method = b.readMarks;
      if (method === undefined) {
        expect(a.readMarks, `${options.name}: no readMarks on any client`).toBeUndefined();
        return;
      }
      expect(method, `${options.name}: readMarks is a method`).toBeTypeOf('function');
      const read: MarkReader = (keys, batch) => method.call(b, keys, batch);
      const crashes = spyOnCrashes();
      try {
        expect(
          await readChecked(options, read, ['rm never'], 'a key of a fresh namespace'),
          'a key never claimed has no mark',
        ).toEqual([null]);
        expect((await read([])).marks, 'an empty array answers no marks').toEqual([]);

        const t = await claimFires(a, b, options.capabilities);
        const named = ['rm won', 'rm busy', 'rm lost', 'rm per-fire', 'rm withdrawn'];
        const keys = [
          ...named,
          'rm catch-up',
          'rm never',
          'rm busy', // repeated keys answer their mark each time
          ...ODD_KEYS,
          ...BULK_KEYS,
          'rm won',
          'rm never',
        ];
        const marks = await readChecked(options, read, keys, `readMarks of ${keys.length} keys`);
        const expected = await inspectedMarks(a, keys);
        expectSameMarks(keys, marks, expected, `readMarks of ${keys.length} keys`);
        if (options.capabilities.durableMark !== undefined) {
          // the oracle itself: inspect reports the marks the claims made
          expect(expected.slice(0, 4), 'inspect: marks of won, busy, lost, per-fire').toEqual([
            t - 20_000,
            t - 10_000,
            t - 5000,
            t,
          ]);
          expect(expected.filter((m) => m !== null).length).toBeGreaterThan(200);
        }

        // a claim moves a mark: the next read sees it
        const L = leaseFor(options.capabilities, 60_000);
        wonLease(await a.claim(req('rm won', t, 'a', L, false)), 'a newer fire of rm won');
        const again = await readChecked(options, read, keys, 'readMarks after a claim', {
          signal: new AbortController().signal,
        });
        expectSameMarks(keys, again, await inspectedMarks(a, keys), 'readMarks after a claim');

        // refusals
        for (const [bad, where] of [
          [[...BULK_KEYS, 'bad \uD800 key'], 'a lone surrogate after 300 good keys'],
          [['bad \uDC00', 'rm won'], 'a lone surrogate first'],
          [['rm won', 42 as unknown as string], 'a non-string key'],
        ] as const) {
          expectError(await rejectionOf(() => read(bad)), 'INVALID_OPTION', where, 'key');
        }
        const aborted = AbortSignal.abort(new Error('the caller gave up'));
        expectError(
          await rejectionOf(() => read(keys, { signal: aborted })),
          'BACKEND_UNAVAILABLE',
          'readMarks with an aborted signal',
        );
        expect(await read(['rm busy']), 'the client still answers').toMatchObject({
          marks: [expected[1]],
        });
        expect(crashes.caught, 'no unhandled rejection or uncaught exception').toEqual([]);
      } finally {
        crashes.dispose();
      }
    });
  },
};
