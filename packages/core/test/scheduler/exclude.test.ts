import { describe, expect, it } from 'vitest';
import {
  type Calendar,
  type CatchUpPolicy,
  cron,
  every,
  FakeClock,
  type Logger,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import { allHistory, recordEvents, stopOnFakeClock } from './helpers.js';

const MIN = 60_000;
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** A calendar excluding the fires of the listed minutes (epoch ms), with the zones it was asked in. */
function minutesOff(minutes: readonly number[], reason = 'freeze window') {
  const asked: string[] = [];
  const calendar: Calendar = {
    excludedBy(fireAt, zone) {
      asked.push(zone);
      return minutes.includes(fireAt) ? reason : null;
    },
    describe: () => `minutes ${minutes.map((m) => m / MIN).join(', ')}`,
  };
  return { calendar, asked };
}

describe("a job's exclude calendar", () => {
  it('refuses a value that is not a Calendar at add(), naming the field', () => {
    const s = new Scheduler({ lock: new MemoryLock(), logger: quiet });
    let error: unknown;
    try {
      s.add({ name: 'j', trigger: every(MIN), run() {}, exclude: { dates: [] } as never });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'INVALID_OPTION', field: 'exclude' });
    expect(String(error)).toContain('exclusions()');
  });

  it('an excluded fire is claimed nowhere and runs nowhere; every instance publishes fire.excluded with the reason', async () => {
    const fake = new FakeClock(0);
    const lock = new MemoryLock({ clock: fake });
    const { calendar, asked } = minutesOff([2 * MIN, 4 * MIN]);
    const ran: number[] = [];
    const fleet = ['a', 'b', 'c'].map((instanceId) => {
      const s = new Scheduler({ lock, clock: fake, instanceId, logger: quiet });
      s.add({
        name: 'job',
        trigger: every(MIN),
        exclude: calendar,
        run: (ctx) => void ran.push(ctx.fireAt.getTime()),
      });
      return s;
    });
    const rec = recordEvents();
    for (const s of fleet) s.start();
    await fake.advance(5.5 * MIN);
    rec.stop();
    expect(ran.sort((x, y) => x - y)).toEqual([MIN, 3 * MIN, 5 * MIN]);
    const excluded = rec.events.filter((e) => e.type === 'fire.excluded');
    expect(
      excluded.map((e) => [e.instanceId, e.fireAt, 'reason' in e ? e.reason : null]).sort(),
    ).toEqual(
      [2 * MIN, 4 * MIN]
        .flatMap((t) => ['a', 'b', 'c'].map((id) => [id, t, 'freeze window']))
        .sort(),
    );
    const claimed = (await lock.inspect('job')).fires.map((f) => f.fireAt);
    expect(claimed).not.toContain(2 * MIN);
    expect(claimed).not.toContain(4 * MIN);
    expect(new Set(asked)).toEqual(new Set(['UTC'])); // every(): the zone is UTC
    for (const s of fleet) await stopOnFakeClock(s, fake);
  });

  it("reads the calendar in the job's zone: a cron trigger's tz", async () => {
    const fake = new FakeClock(0);
    const { calendar, asked } = minutesOff([]);
    const s = new Scheduler({ lock: new MemoryLock({ clock: fake }), clock: fake, logger: quiet });
    s.add({
      name: 'berlin',
      trigger: cron('* * * * *', { tz: 'Europe/Berlin' }),
      exclude: calendar,
      run() {},
    });
    s.start();
    await fake.advance(2.5 * MIN);
    expect(asked.length).toBeGreaterThanOrEqual(2);
    expect(new Set(asked)).toEqual(new Set(['Europe/Berlin']));
    await stopOnFakeClock(s, fake);
  });

  it('a calendar that throws excludes nothing: logged, and the fire runs', async () => {
    const fake = new FakeClock(0);
    const errors: string[] = [];
    const logger: Logger = { ...quiet, error: (message) => void errors.push(message) };
    const s = new Scheduler({ lock: new MemoryLock({ clock: fake }), clock: fake, logger });
    const ran: number[] = [];
    s.add({
      name: 'job',
      trigger: every(MIN),
      exclude: {
        excludedBy() {
          throw new Error('calendar broken');
        },
        describe: () => 'broken',
      },
      run: (ctx) => void ran.push(ctx.fireAt.getTime()),
    });
    s.start();
    await fake.advance(2.5 * MIN);
    expect(ran).toEqual([MIN, 2 * MIN]);
    expect(errors).toContain(
      "fleetcron: the job's exclude calendar threw; the fire is not excluded",
    );
    await stopOnFakeClock(s, fake);
  });
});

/**
 * A fleet of two runs `every(1 min)` with `exclude` (minutes 5 and 7 off) for 2 minutes, is
 * down across the 3–7 min fires, and starts again at 7.5 min.
 */
async function downAcrossExcluded(catchUp: CatchUpPolicy) {
  const fake = new FakeClock(0);
  const lock = new MemoryLock({ clock: fake });
  const store = new MemoryStore({ clock: fake });
  const { calendar } = minutesOff([5 * MIN, 7 * MIN], 'holiday');
  const ran: number[] = [];
  const make = (instanceId: string) => {
    const s = new Scheduler({ lock, store, clock: fake, instanceId, logger: quiet });
    s.add({
      name: 'job',
      trigger: every(MIN),
      catchUp,
      exclude: calendar,
      run: (ctx) => void ran.push(ctx.fireAt.getTime()),
    });
    return s;
  };
  let fleet = ['a', 'b'].map(make);
  for (const s of fleet) s.start();
  await fake.advance(2 * MIN);
  for (const s of fleet) await stopOnFakeClock(s, fake);
  await fake.advance(7.5 * MIN - fake.now());
  ran.length = 0;
  fleet = ['a2', 'b2'].map(make);
  for (const s of fleet) s.start();
  await fake.advance(6_000);
  for (let i = 0; i < 20; i++) await fake.flush();
  for (const s of fleet) await stopOnFakeClock(s, fake);
  return { ran, rows: (await allHistory(store, 'job')).filter((r) => r.fireAt > 2 * MIN) };
}

describe('catch-up does not owe excluded fires', () => {
  it("'latest' runs the newest missed fire that is not excluded (6 min, not the excluded 7 min)", async () => {
    const { ran } = await downAcrossExcluded('latest');
    expect(ran).toEqual([6 * MIN]);
  });

  it('{ max: 3 } runs the newest three not excluded (3, 4 and 6 min)', async () => {
    const { ran } = await downAcrossExcluded({ max: 3 });
    expect(ran).toEqual([3 * MIN, 4 * MIN, 6 * MIN]);
  });

  it("'skip' records only the missed fires that are not excluded", async () => {
    const { ran, rows } = await downAcrossExcluded('skip');
    expect(ran).toEqual([]);
    expect(rows.map((r) => [r.fireAt, r.status, r.reason]).sort()).toEqual(
      [3, 4, 6].map((m) => [m * MIN, 'skipped', 'missed']),
    );
  });
});
