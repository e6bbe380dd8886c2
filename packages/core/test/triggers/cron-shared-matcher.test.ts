import { describe, expect, it } from 'vitest';
import { cron } from '../../src/index.js';

describe('cron triggers of one expression share its matcher (it remembers its last answer)', () => {
  it('interleaved questions from many triggers get the answers a lone walk gets', () => {
    const walk = (expression: string, tz: string, from: number, steps: number) => {
      const trigger = cron(expression, { tz });
      const fires: number[] = [];
      for (let at = from, i = 0; i < steps; i++) {
        const next = trigger.next(new Date(at))?.getTime();
        if (next === undefined) break;
        fires.push(next);
        at = next;
      }
      return fires;
    };
    const from = Date.UTC(2026, 2, 28, 23, 0, 0); // across the Europe/Berlin spring-forward night
    for (const [expression, tz] of [
      ['*/10 * * * * *', 'UTC'],
      ['30 2 * * *', 'Europe/Berlin'],
      ['0 */7 * * * *', 'America/New_York'],
    ] as const) {
      const alone = walk(expression, tz, from, 40);
      const triggers = Array.from({ length: 5 }, () => cron(expression, { tz }));
      const positions = triggers.map(() => from);
      const seen: number[][] = triggers.map(() => []);
      // ask in a scrambled order: trigger i asks about its own position, others ask about theirs
      for (let round = 0; round < 40 * triggers.length; round++) {
        const i = (round * 7 + Math.floor(round / 3)) % triggers.length;
        if ((seen[i] as number[]).length >= 40) continue;
        const next = (triggers[i] as ReturnType<typeof cron>).next(
          new Date(positions[i] as number),
        );
        if (next === null) continue;
        (seen[i] as number[]).push(next.getTime());
        positions[i] = next.getTime();
        // the same question again, and one from another time, answered alike
        expect(triggers[0]?.next(new Date(positions[i] as number))?.getTime()).toBe(
          cron(expression, { tz })
            .next(new Date(positions[i] as number))
            ?.getTime(),
        );
      }
      for (const fires of seen) expect(fires).toEqual(alone.slice(0, fires.length));
      expect(alone.length).toBe(40);
    }
  });
});
