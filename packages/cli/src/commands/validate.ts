import { cron, isFleetcronError } from '@fleetcron/core';
import { dialectOption, type ParsedCommand } from '../args.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import type { CliIo } from '../io.js';

/**
 * `fleetcron validate "<expr>" [--tz ZONE] [--dialect quartz|unix] [--json]`: exit 0 valid, 1
 * with the typed error's message (e.g. `AMBIGUOUS_CRON_DIALECT` for a Quartz-looking expression
 * with numeric weekdays and no `--dialect`).
 */
export function validateCommand({ operand, options }: ParsedCommand, io: CliIo): ExitCode {
  const expression = operand as string;
  const dialect = dialectOption(options.dialect);
  try {
    const tz = options.tz ?? 'UTC';
    const trigger = cron(expression, dialect === undefined ? { tz } : { tz, dialect });
    const next = trigger.next(new Date());
    if (options.json) {
      io.out(
        JSON.stringify({
          valid: true,
          expression,
          tz: trigger.tz,
          ...(dialect === undefined ? {} : { dialect }),
          description: trigger.describe(),
          next: next?.toISOString() ?? null,
        }),
      );
    } else {
      io.out(`valid: ${trigger.describe()}${next ? `, next fire ${next.toISOString()}` : ''}`);
    }
    return EXIT.ok;
  } catch (error) {
    if (!isFleetcronError(error)) throw error;
    if (options.json) {
      io.out(
        JSON.stringify({
          valid: false,
          expression,
          error: { code: error.code, message: error.message, field: error.field },
        }),
      );
    } else {
      io.err(`invalid: ${error.message}`);
    }
    return EXIT.invalid;
  }
}
