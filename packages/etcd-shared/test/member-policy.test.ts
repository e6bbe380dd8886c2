import { GRPCDeadlineExceededError, GRPCUnavailableError } from 'etcd3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  FIRST_SKIP_MS,
  MemberSkippedError,
  memberPolicies,
  SUSPECT_AFTER_MS,
} from '../src/member-policy.js';

// The per-member policy of a client given several etcd members: a member that failed or did not
// answer is left out while another member can take the call, and an answer ends the skip.

afterEach(() => {
  vi.useRealTimers();
});

const call =
  <T>(value: T) =>
  () =>
    Promise.resolve(value);
const fail = (error: Error) => () => Promise.reject(error);

describe('memberPolicies', () => {
  it('leaves out a member whose call failed, until the skip ends; an answer ends it', async () => {
    let now = 0;
    const policy = memberPolicies(() => now);
    const a = policy('a');
    policy('b');
    await expect(a.execute(fail(new GRPCUnavailableError('down')))).rejects.toThrow('down');
    await expect(a.execute(call(1))).rejects.toBeInstanceOf(MemberSkippedError);
    now = FIRST_SKIP_MS + 1;
    expect(await a.execute(call(2))).toBe(2); // the probe
    await expect(a.execute(call(3))).resolves.toBe(3);
  });

  it('doubles the skip with each failed probe', async () => {
    let now = 0;
    const policy = memberPolicies(() => now);
    const a = policy('a');
    policy('b');
    await expect(a.execute(fail(new GRPCDeadlineExceededError('late')))).rejects.toThrow();
    now = FIRST_SKIP_MS + 1;
    await expect(a.execute(fail(new GRPCDeadlineExceededError('late')))).rejects.toThrow();
    now += FIRST_SKIP_MS + 1;
    await expect(a.execute(call(1))).rejects.toBeInstanceOf(MemberSkippedError);
    now += FIRST_SKIP_MS;
    expect(await a.execute(call(1))).toBe(1);
  });

  it('never leaves out a member while every other member is left out too', async () => {
    const policy = memberPolicies(() => 0);
    const a = policy('a');
    const b = policy('b');
    await expect(a.execute(fail(new GRPCUnavailableError('down')))).rejects.toThrow();
    await expect(b.execute(fail(new GRPCUnavailableError('down')))).rejects.toThrow();
    expect(await a.execute(call('through'))).toBe('through');
  });

  it('does not count an error of the request (not of the member)', async () => {
    const policy = memberPolicies(() => 0);
    const a = policy('a');
    policy('b');
    await expect(a.execute(fail(new Error('lease not found')))).rejects.toThrow();
    expect(await a.execute(call('ok'))).toBe('ok');
  });

  it('marks a member whose call is unanswered for SUSPECT_AFTER_MS (a frozen member)', async () => {
    vi.useFakeTimers();
    let now = 0;
    const policy = memberPolicies(() => now);
    const a = policy('a');
    policy('b');
    const hanging = a.execute(() => new Promise<never>(() => {}));
    now = SUSPECT_AFTER_MS;
    vi.advanceTimersByTime(SUSPECT_AFTER_MS);
    await expect(a.execute(call(1))).rejects.toBeInstanceOf(MemberSkippedError);
    void hanging;
  });

  it('does not take an opened stream for an answer', async () => {
    let now = 0;
    const policy = memberPolicies(() => now);
    const a = policy('a');
    policy('b');
    await expect(a.execute(fail(new GRPCUnavailableError('down')))).rejects.toThrow();
    now = FIRST_SKIP_MS + 1;
    const stream = { write: () => true, on: () => stream };
    expect(await a.execute(call(stream))).toBe(stream);
    // Its failures still count: the next failure doubles the skip, as after a failed probe.
    await expect(a.execute(fail(new GRPCUnavailableError('down')))).rejects.toThrow();
    now += FIRST_SKIP_MS + 1;
    await expect(a.execute(call(1))).rejects.toBeInstanceOf(MemberSkippedError);
  });
});
