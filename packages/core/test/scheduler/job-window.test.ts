import { describe, expect, it } from 'vitest';
import { cron, every, FakeClock, type Logger, MemoryLock, Scheduler } from '../../src/index.js';
import { stopOnFakeClock } from './helpers.js';

const MIN = 60_000;
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

function addError(job: Record<string, unknown>): unknown {
  const s = new Scheduler({ lock: new MemoryLock(), logger: quiet });
  try {
    s.add({ name: 'j', trigger: every(MIN), run() {}, ...job });
  } catch (error) {
    return error;
  }
  return null;
}

describe("a job's startAt and endAt", () => {
  it.each([
    ['startAt', { startAt: new Date(Number.NaN) }, 'Invalid Date'],
    ['startAt', { startAt: 'tomorrow' }, '"tomorrow"'],
    ['endAt', { endAt: Number.POSITIVE_INFINITY }, 'epoch milliseconds'],
    ['endAt', { startAt: 5 * MIN, endAt: 4 * MIN }, 'must not be before startAt'],
  ])('refuses a bad %s at add(), naming the field (%j)', (field, job, words) => {
    const error = addError(job);
    expect(error).toMatchObject({ code: 'INVALID_OPTION', field });
    expect(String(error)).toContain(words);
  });

  it('fires only at or after startAt and at or before endAt, then the job is done', async () => {
    const fake = new FakeClock(0);
    const s = new Scheduler({ lock: new MemoryLock({ clock: fake }), clock: fake, logger: quiet });
    const ran: number[] = [];
    s.add({
      name: 'window',
      trigger: every(MIN),
      startAt: new Date(2 * MIN),
      endAt: 4 * MIN,
      run: (ctx) => void ran.push(ctx.fireAt.getTime()),
    });
    s.start();
    await fake.advance(7.5 * MIN);
    expect(ran).toEqual([2 * MIN, 3 * MIN, 4 * MIN]);
    const [info] = s.jobs();
    expect(info?.trigger).toContain('from 1970-01-01T00:02:00.000Z until 1970-01-01T00:04:00.000Z');
    await stopOnFakeClock(s, fake);
  });

  it("keeps the cron trigger's zone and H seed (the window wraps the seeded trigger)", async () => {
    const fake = new FakeClock(0);
    const s = new Scheduler({ lock: new MemoryLock({ clock: fake }), clock: fake, logger: quiet });
    const seen: string[] = [];
    s.add({
      name: 'zoned',
      trigger: cron('H * * * *', { tz: 'Asia/Kolkata' }),
      startAt: 0,
      exclude: {
        excludedBy: (_fireAt, zone) => {
          seen.push(zone);
          return null;
        },
        describe: () => 'nothing',
      },
      run() {},
    });
    s.start();
    await fake.advance(2 * 60 * MIN);
    expect(new Set(seen)).toEqual(new Set(['Asia/Kolkata']));
    expect(s.jobs()[0]?.trigger).toContain('cron(H');
    await stopOnFakeClock(s, fake);
  });

  it('catch-up does not owe fires after endAt', async () => {
    const fake = new FakeClock(0);
    const lock = new MemoryLock({ clock: fake });
    const ran: number[] = [];
    const make = () => {
      const s = new Scheduler({ lock, clock: fake, logger: quiet });
      s.add({
        name: 'ends',
        trigger: every(MIN),
        catchUp: 'latest',
        endAt: 4 * MIN,
        run: (ctx) => void ran.push(ctx.fireAt.getTime()),
      });
      return s;
    };
    const first = make();
    first.start();
    await fake.advance(2.5 * MIN);
    await stopOnFakeClock(first, fake);
    await fake.advance(6.5 * MIN - fake.now()); // down across 3, 4, 5 and 6 min
    ran.length = 0;
    const again = make();
    again.start();
    await fake.advance(2 * MIN);
    expect(ran).toEqual([4 * MIN]); // the newest missed fire within the window; none after it
    await stopOnFakeClock(again, fake);
  });
});
