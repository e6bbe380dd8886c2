import { describe, expect, it } from 'vitest';
import { WaitTimeoutError } from '../src/errors.js';
import { waitFor } from '../src/wait.js';

describe('waitFor', () => {
  it('returns the first truthy value', async () => {
    let n = 0;
    const value = await waitFor(() => (++n >= 3 ? `done after ${n}` : false), { intervalMs: 1 });
    expect(value).toBe('done after 3');
  });

  it('treats throwing conditions as not yet and reports the last error as cause', async () => {
    const error = await waitFor(
      () => {
        throw new Error('still broken');
      },
      { timeoutMs: 100, intervalMs: 10, message: 'the thing' },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((error as Error).message).toMatch(/the thing not met within 100 ms/);
    expect((error as Error).message).toMatch(/still broken/);
    expect(((error as Error).cause as Error).message).toBe('still broken');
  });

  it('ends at the deadline even when the condition hangs', async () => {
    const started = Date.now();
    const error = await waitFor(() => new Promise<boolean>(() => {}), {
      timeoutMs: 150,
      message: () => 'lazy message',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((error as Error).message).toMatch(/lazy message/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('does not leak a rejection of a condition that settles after the deadline', async () => {
    let rejected!: () => void;
    const lateRejectionFired = new Promise<void>((resolve) => {
      rejected = resolve;
    });
    const error = await waitFor(
      () =>
        new Promise<boolean>((_, reject) =>
          setTimeout(() => {
            reject(new Error('late'));
            setImmediate(rejected);
          }, 80),
        ),
      { timeoutMs: 20 },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    // vitest fails the run on an unhandled rejection; make sure the late one has happened
    await lateRejectionFired;
  });
});
