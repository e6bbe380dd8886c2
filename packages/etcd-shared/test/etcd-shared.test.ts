import { BackendUnavailableError, isFleetcronError } from '@fleetcron/core';
import { Etcd3, EtcdLeaseInvalidError, type IOptions } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { callEtcd, randomLeaseId, SINGLE_ATTEMPT, singleAttemptClientOf } from '../src/index.js';

const optionsOf = (client: Etcd3) => (client as unknown as { options: IOptions }).options;

describe('singleAttemptClientOf', () => {
  it("copies the user's client with one attempt per call, leaving the user's client as it was", async () => {
    const user = new Etcd3({ hosts: ['http://127.0.0.1:1'], dialTimeout: 1234 });
    const copy = singleAttemptClientOf(user);
    try {
      expect(copy).not.toBe(user);
      expect(optionsOf(copy)).toMatchObject({ hosts: ['http://127.0.0.1:1'], dialTimeout: 1234 });
      expect(optionsOf(copy).faultHandling).toMatchObject(SINGLE_ATTEMPT);
      expect(optionsOf(user).faultHandling, "the user's client keeps etcd3's policies").toBe(
        undefined,
      );
    } finally {
      copy.close();
      user.close();
    }
  });

  it('its policy runs the call exactly once, as attempt 0, and passes its failure on', async () => {
    const policy = SINGLE_ATTEMPT.global as unknown as {
      execute<T>(fn: (context: { attempt: number }) => Promise<T>): Promise<T>;
    };
    const attempts: number[] = [];
    const failure = new Error('refused');
    await expect(
      policy.execute(async ({ attempt }) => {
        attempts.push(attempt);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(attempts).toEqual([0]);
  });
});

describe('callEtcd', () => {
  it('a call that does not settle in time is BACKEND_UNAVAILABLE naming the option', async () => {
    const error = await callEtcd('claim', 20, () => new Promise<never>(() => {})).catch(
      (e: unknown) => e,
    );
    expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toBe(
      'etcd backend unavailable during claim: etcd did not answer within 20 ms (requestTimeoutMs)',
    );
  });

  it('wraps a driver error as its cause, and passes on the errors `keep` picks', async () => {
    const refused = new Error('14 UNAVAILABLE: connection refused');
    const wrapped = await callEtcd('record', 1000, () => Promise.reject(refused)).catch(
      (e: unknown) => e,
    );
    expect(wrapped).toBeInstanceOf(BackendUnavailableError);
    expect((wrapped as Error).cause).toBe(refused);
    const gone = new EtcdLeaseInvalidError('lease not found');
    const kept = await callEtcd(
      'revoke',
      1000,
      () => Promise.reject(gone),
      (e) => e instanceof EtcdLeaseInvalidError,
    ).catch((e: unknown) => e);
    expect(kept).toBe(gone);
  });
});

describe('randomLeaseId', () => {
  it('is a safe positive integer (exact as a number and as an int64)', () => {
    for (let i = 0; i < 1000; i++) {
      const id = randomLeaseId();
      expect(Number.isSafeInteger(id) && id >= 1).toBe(true);
    }
  });
});
