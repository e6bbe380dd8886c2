import { describe, expect, it } from 'vitest';
import { recover } from '../../src/middleware/recover.js';
import { compose } from '../../src/middleware.js';
import { makeContext } from './context.js';

describe('recover()', () => {
  it('passes a successful run through without logging', async () => {
    const { ctx, logs } = makeContext();
    let ran = 0;
    await compose([recover()], () => {
      ran++;
    })(ctx);
    expect(ran).toBe(1);
    expect(logs).toEqual([]);
  });

  it('rethrows a synchronous throw as the same Error and logs it', async () => {
    const { ctx, logs } = makeContext();
    const boom = new Error('boom');
    const run = compose([recover()], () => {
      throw boom;
    });
    await expect(run(ctx)).rejects.toBe(boom);
    expect(logs).toHaveLength(1);
    expect(logs[0]?.level).toBe('error');
    expect(logs[0]?.fields).toMatchObject({ job: 'job-a', attempt: 1, error: 'boom' });
  });

  it('rethrows a rejection as an Error', async () => {
    const { ctx } = makeContext();
    const run = compose([recover()], async () => {
      await Promise.resolve();
      throw new TypeError('bad type');
    });
    await expect(run(ctx)).rejects.toBeInstanceOf(TypeError);
  });

  it.each([
    ['a string', 'oops', 'non-Error value thrown: oops'],
    ['a number', 42, 'non-Error value thrown: 42'],
    ['an object', { code: 1 }, 'non-Error value thrown: {"code":1}'],
    ['undefined', undefined, 'non-Error value thrown'],
    ['null', null, 'non-Error value thrown: null'],
  ])('turns %s thrown into an Error keeping the value as cause', async (_label, value, message) => {
    const { ctx, logs } = makeContext();
    const run = compose([recover()], () => Promise.reject(value));
    const error = await run(ctx).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain(message);
    expect((error as Error).cause).toBe(value);
    expect(logs[0]?.level).toBe('error');
  });

  it('covers middleware placed after it', async () => {
    const { ctx } = makeContext();
    const run = compose(
      [
        recover(),
        async () => {
          throw 'from middleware';
        },
      ],
      () => {},
    );
    await expect(run(ctx)).rejects.toThrow('non-Error value thrown: from middleware');
  });
});
