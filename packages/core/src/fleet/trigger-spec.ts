import { InvalidOptionError } from '../errors.js';
import type { TriggerSpec } from '../registry.js';
import type { Trigger } from '../trigger.js';
import { at } from '../triggers/at.js';
import { cron } from '../triggers/cron.js';
import { every } from '../triggers/every.js';

/** The JSON spec of a trigger (`trigger.spec` of the built-in triggers), `null` for custom ones. */
export function triggerSpecOf(trigger: Trigger): TriggerSpec | null {
  const spec = trigger.spec;
  if (typeof spec !== 'object' || spec === null) return null;
  return { ...spec };
}

/**
 * Rebuilds a built-in trigger from its spec (as published in the registry), so a process that
 * does not define the job can compute its fires.
 *
 * @throws InvalidOptionError (field `spec`) for an unknown kind; the triggers' own errors for
 *   bad values.
 */
export function triggerFromSpec(spec: TriggerSpec): Trigger {
  switch (spec?.kind) {
    case 'cron':
      return cron(spec.expression, {
        tz: spec.tz,
        ...(spec.seed === undefined ? {} : { seed: spec.seed }),
        ...(spec.dialect === undefined ? {} : { dialect: spec.dialect }),
      });
    case 'every':
      return every(spec.ms, { anchor: spec.anchor });
    case 'at':
      return at(spec.at);
    default:
      throw new InvalidOptionError(
        'spec',
        `has an unknown kind ${JSON.stringify((spec as { kind?: unknown })?.kind)}; expected cron, every or at.`,
      );
  }
}

/** The next `count` fires of `spec` strictly after `after` (fewer when the trigger ends). */
export function nextFires(spec: TriggerSpec, after: number, count = 5): number[] {
  const trigger = triggerFromSpec(spec);
  const fires: number[] = [];
  let from = new Date(after);
  while (fires.length < count) {
    const next = trigger.next(from);
    if (next === null || next.getTime() <= from.getTime()) break;
    fires.push(next.getTime());
    from = next;
  }
  return fires;
}
