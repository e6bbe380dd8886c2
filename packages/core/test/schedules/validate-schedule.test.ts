import { describe, expect, it } from 'vitest';
import {
  FakeClock,
  FleetClient,
  isFleetcronError,
  MAX_SCHEDULE_DATA_BYTES,
  MemoryStore,
} from '../../src/index.js';

const base = { handler: 'reports.daily', trigger: { kind: 'cron', expression: '0 3 * * *' } };

function setup() {
  const store = new MemoryStore({ clock: new FakeClock() });
  return { store, fleet: new FleetClient({ store }) };
}

/** Creates `input`, expects a typed error with `code` naming `field`, and that nothing was stored. */
async function refused(input: unknown, code: string, field: string): Promise<void> {
  const { store, fleet } = setup();
  const error = await fleet.createSchedule(input as never, { by: 'alice' }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(isFleetcronError(error, code as never), String(error)).toBe(true);
  expect((error as { field?: string }).field).toBe(field);
  expect((await store.listSchedules()).schedules).toEqual([]);
}

describe('stored schedule checks: a typed error naming the field, nothing stored', () => {
  it('stores a valid schedule normalised (UTC zone, data null, enabled, no options)', async () => {
    const { fleet } = setup();
    const s = await fleet.createSchedule({ id: 'r1', ...base } as never, { by: 'alice' });
    expect(s).toMatchObject({
      id: 'r1',
      handler: 'reports.daily',
      trigger: { kind: 'cron', expression: '0 3 * * *', tz: 'UTC' },
      data: null,
      enabled: true,
      options: {},
      version: 1,
      createdBy: 'alice',
      updatedBy: 'alice',
    });
  });

  it('invalid cron: INVALID_CRON on trigger.expression', async () => {
    await refused(
      { ...base, trigger: { kind: 'cron', expression: '61 * * * *' } },
      'INVALID_CRON',
      'trigger.expression',
    );
  });

  it('unknown zone: UNKNOWN_TIMEZONE on trigger.tz', async () => {
    await refused(
      { ...base, trigger: { kind: 'cron', expression: '0 3 * * *', tz: 'Mars/Olympus' } },
      'UNKNOWN_TIMEZONE',
      'trigger.tz',
    );
  });

  it('unknown trigger kind and unknown trigger keys', async () => {
    await refused({ ...base, trigger: { kind: 'weekly' } }, 'INVALID_OPTION', 'trigger.kind');
    await refused(
      { ...base, trigger: { kind: 'every', ms: 1000, anchr: 0 } },
      'INVALID_OPTION',
      'trigger.anchr',
    );
  });

  it('handler name shape', async () => {
    for (const handler of ['', '1report', 'has space', 'x'.repeat(129), 'a\nb']) {
      await refused({ ...base, handler }, 'INVALID_OPTION', 'handler');
    }
  });

  it('id shape', async () => {
    for (const id of ['', '-lead', 'a b', 'x'.repeat(201)]) {
      await refused({ ...base, id }, 'INVALID_OPTION', 'id');
    }
  });

  it('data over 64 KiB', async () => {
    const big = 'x'.repeat(MAX_SCHEDULE_DATA_BYTES); // plus the quotes: two bytes over
    await refused({ ...base, data: big }, 'INVALID_OPTION', 'data');
    const { fleet } = setup();
    const fits = await fleet.createSchedule(
      { ...base, data: 'x'.repeat(MAX_SCHEDULE_DATA_BYTES - 2) } as never,
      { by: 'a' },
    );
    expect((fits.data as string).length).toBe(MAX_SCHEDULE_DATA_BYTES - 2);
  });

  it('data that is not JSON names the path inside it', async () => {
    await refused({ ...base, data: { a: [1, Number.NaN] } }, 'INVALID_OPTION', 'data.a[1]');
    await refused({ ...base, data: { when: new Date(0) } }, 'INVALID_OPTION', 'data.when');
    await refused({ ...base, data: { f: () => 1 } }, 'INVALID_OPTION', 'data.f');
    await refused({ ...base, data: { u: undefined } }, 'INVALID_OPTION', 'data.u');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await refused({ ...base, data: cyclic }, 'INVALID_OPTION', `data${'.self'.repeat(65)}`);
  });

  it('unknown keys, at the top and in options, with the nearest known one', async () => {
    const { fleet } = setup();
    const error = await fleet
      .createSchedule({ ...base, options: { leasMs: 5000 } } as never, { by: 'a' })
      .catch((e: Error) => e);
    expect(error).toMatchObject({ code: 'INVALID_OPTION', field: 'options.leasMs' });
    expect((error as Error).message).toContain('did you mean "leaseMs"');
    await refused({ ...base, enabeld: true }, 'INVALID_OPTION', 'enabeld');
    await refused(
      { ...base, options: { retry: { attempts: 2, wait: 1 } } },
      'INVALID_OPTION',
      'options.retry.wait',
    );
  });

  it('bad option values name the option', async () => {
    await refused({ ...base, options: { leaseMs: -1 } }, 'INVALID_OPTION', 'options.leaseMs');
    await refused({ ...base, options: { overlap: 'queue' } }, 'INVALID_OPTION', 'options.overlap');
    await refused(
      { ...base, options: { catchUp: { max: 0 } } },
      'INVALID_OPTION',
      'options.catchUp.max',
    );
    await refused(
      { ...base, options: { retry: { attempts: 0 } } },
      'INVALID_OPTION',
      'options.retry.attempts',
    );
    await refused({ ...base, options: { timeoutMs: 0 } }, 'INVALID_OPTION', 'options.timeoutMs');
    await refused(
      { ...base, options: { overdueAfterMs: -5 } },
      'INVALID_OPTION',
      'options.overdueAfterMs',
    );
    await refused({ ...base, options: { jitterMs: -1 } }, 'INVALID_OPTION', 'options.jitterMs');
    await refused(
      { ...base, options: { note: 'n'.repeat(1001) } },
      'INVALID_OPTION',
      'options.note',
    );
  });

  it('start after end', async () => {
    await refused(
      { ...base, options: { startAt: Date.UTC(2026, 5, 2), endAt: Date.UTC(2026, 5, 1) } },
      'INVALID_OPTION',
      'options.endAt',
    );
  });

  it('an update is checked in full against the merged schedule and stores nothing when bad', async () => {
    const { fleet } = setup();
    const s = await fleet.createSchedule(
      { id: 'w', ...base, options: { startAt: Date.UTC(2026, 5, 2) } } as never,
      { by: 'a' },
    );
    const error = await fleet
      .updateSchedule(
        'w',
        { options: { endAt: Date.UTC(2026, 5, 1) } },
        { by: 'b', expectedVersion: 1 },
      )
      .catch((e: Error) => e);
    expect(error).toMatchObject({ code: 'INVALID_OPTION', field: 'options.endAt' });
    expect(await fleet.getSchedule('w')).toEqual(s);
  });
});
