import { describe, expect, it } from 'vitest';
import { BackendUnavailableError, isFleetcronError } from '../src/index.js';

describe('BackendUnavailableError', () => {
  it("appends the driver error's message and keeps it as the cause", () => {
    const cause = new Error('connection refused');
    const error = new BackendUnavailableError('etcd', 'claim', cause);
    expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
    expect(error.message).toBe('etcd backend unavailable during claim: connection refused');
    expect(error.cause).toBe(cause);
    expect(error.backend).toBe('etcd');
  });

  it('because() says what happened when no driver error does, with no cause', () => {
    const error = BackendUnavailableError.because('etcd', 'record', 'the row changed 5 times');
    expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
    expect(error.message).toBe('etcd backend unavailable during record: the row changed 5 times');
    expect(error.cause).toBeUndefined();
  });

  it('notSent() says the call never reached the backend', () => {
    const error = BackendUnavailableError.notSent('sqlite', 'claimMany');
    expect(error).toBeInstanceOf(BackendUnavailableError);
    expect(error.code).toBe('BACKEND_UNAVAILABLE');
    expect(error.message).toMatch(/during claimMany: given up on by the caller before it was sent/);
  });
});
