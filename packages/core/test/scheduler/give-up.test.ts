import { describe, expect, it } from 'vitest';
import { GiveUp } from '../../src/scheduler/timing/give-up.js';

describe('GiveUp', () => {
  it('calls each listener once, in order, on the first abort only; later listeners never', () => {
    const g = new GiveUp();
    const calls: string[] = [];
    g.addEventListener('abort', () => calls.push('a'));
    g.addEventListener('abort', () => {
      throw new Error('a throwing listener does not stop the others');
    });
    g.addEventListener('abort', () => calls.push('c'));
    expect(g.aborted).toBe(false);
    const reason = new Error('stop');
    g.abort(reason);
    g.abort(new Error('again'));
    g.addEventListener('abort', () => calls.push('late'));
    expect(calls).toEqual(['a', 'c']);
    expect(g.aborted).toBe(true);
    expect(g.reason).toBe(reason);
  });

  it('does not call a removed listener', () => {
    const g = new GiveUp();
    const calls: string[] = [];
    const removed = () => calls.push('removed');
    g.addEventListener('abort', removed);
    g.addEventListener('abort', () => calls.push('kept'));
    g.removeEventListener('abort', removed);
    g.abort();
    expect(calls).toEqual(['kept']);
    expect((g.reason as Error).name).toBe('AbortError');
  });

  it('makes a real AbortSignal on demand that follows it, before or after the abort', () => {
    const before = new GiveUp();
    const signal = before.signal;
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(signal.aborted).toBe(false);
    const reason = new Error('gave up');
    before.abort(reason);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);
    const after = new GiveUp();
    after.abort(reason);
    expect(after.signal.aborted).toBe(true);
    expect(after.signal.reason).toBe(reason);
    expect(after.signal).toBe(after.signal); // one signal per GiveUp
  });
});
