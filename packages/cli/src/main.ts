import { isFleetcronError } from '@fleetcron/core';
import { type ParsedCommand, parseCommandLine, UsageError } from './args.js';
import { auditCommand } from './commands/audit.js';
import { actionCommand, historyCommand, instancesCommand, jobsCommand } from './commands/fleet.js';
import { nextCommand } from './commands/next.js';
import { nextJobCommand } from './commands/next-job.js';
import { requestCommand } from './commands/run-request.js';
import { schedulesCommand } from './commands/schedules.js';
import { serveCommand } from './commands/serve.js';
import { validateCommand } from './commands/validate.js';
import { type Backend, connectBackend } from './connect.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { type CliIo, processIo } from './io.js';
import { terminalSafe } from './terminal-text.js';
import { USAGE } from './usage.js';
import { cliVersion } from './version.js';

async function withBackend(parsed: ParsedCommand, io: CliIo): Promise<ExitCode> {
  const backend: Backend = await connectBackend(parsed.options, io.env, parsed.command === 'serve');
  try {
    switch (parsed.command) {
      case 'instances':
        return await instancesCommand(backend, parsed, io);
      case 'jobs':
        return await jobsCommand(backend, parsed, io);
      case 'next':
        return await nextJobCommand(backend, parsed, io);
      case 'history':
        return await historyCommand(backend, parsed, io);
      case 'pause':
      case 'resume':
      case 'run':
        return await actionCommand(backend, parsed.command, parsed, io);
      case 'request':
        return await requestCommand(backend, parsed, io);
      case 'schedules':
        return await schedulesCommand(backend, parsed, io);
      case 'audit':
        return await auditCommand(backend, parsed, io);
      default:
        return await serveCommand(backend, parsed, io);
    }
  } finally {
    await backend.close();
  }
}

/** Exit code and message for an error: typed errors print their message, never a stack. */
function report(error: unknown, io: CliIo): ExitCode {
  if (error instanceof UsageError) {
    io.err(`fleetcron: ${error.message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  if (isFleetcronError(error)) {
    const cause =
      error.cause instanceof Error && !error.message.includes(error.cause.message)
        ? ` (${error.cause.message})`
        : '';
    io.err(`fleetcron: ${error.message}${cause}`);
    if (/relation "[^"]+" does not exist/.test(error.message + cause)) {
      io.err(
        "fleetcron: the store has no tables in this schema: check --schema, or run the store's migrate() (the fleet's instances do at start)",
      );
    }
    if (error.code === 'BACKEND_UNAVAILABLE') return EXIT.unreachable;
    if (error.code === 'UNKNOWN_JOB' || error.code === 'UNKNOWN_SCHEDULE') return EXIT.unknownJob;
    if (error.code === 'SCHEDULE_CONFLICT') return EXIT.conflict;
    return EXIT.invalid;
  }
  io.err(
    `fleetcron: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  );
  return EXIT.invalid;
}

/**
 * Runs the `fleetcron` command line (`argv` without `node` and the script) and resolves its exit
 * code; never rejects. Results go to `io.out`, errors to `io.err`, both made terminal-safe
 * (control and bidi characters from the fleet's stored text printed as visible escapes).
 */
export async function runCli(
  argv: readonly string[],
  unsafeIo: CliIo = processIo,
): Promise<ExitCode> {
  const io: CliIo = {
    out: (text) => unsafeIo.out(terminalSafe(text)),
    err: (text) => unsafeIo.err(terminalSafe(text)),
    env: unsafeIo.env,
  };
  try {
    const parsed = parseCommandLine(argv);
    if (parsed.command === null) {
      io.out(USAGE);
      return EXIT.ok;
    }
    if (parsed.command === 'version') {
      io.out(cliVersion());
      return EXIT.ok;
    }
    if (parsed.command === 'next' && parsed.options.job === undefined) {
      return nextCommand(parsed, io);
    }
    if (parsed.command === 'validate') return validateCommand(parsed, io);
    return await withBackend(parsed, io);
  } catch (error) {
    return report(error, io);
  }
}
