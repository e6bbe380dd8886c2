import type { Trigger } from '../../src/trigger.js';

/** The first `count` fires strictly after `after`, as ISO strings. */
export function fires(trigger: Trigger, after: string | Date, count: number): string[] {
  const out: string[] = [];
  let cursor = new Date(after);
  for (let i = 0; i < count; i++) {
    const next = trigger.next(cursor);
    if (!next) break;
    out.push(next.toISOString());
    cursor = next;
  }
  return out;
}

/** Every fire in [from, to), as epoch ms. */
export function firesBetween(
  trigger: Trigger,
  from: string | number,
  to: string | number,
): number[] {
  const end = new Date(to).getTime();
  const out: number[] = [];
  let cursor = new Date(new Date(from).getTime() - 1);
  for (;;) {
    const next = trigger.next(cursor);
    if (!next || next.getTime() >= end) return out;
    out.push(next.getTime());
    cursor = next;
  }
}

/** Captures what `fn` throws (or undefined). */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}
