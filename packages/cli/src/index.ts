export { type CliOptions, parseCommandLine, UsageError } from './args.js';
export { type DstNote, type UpcomingFire, upcomingFires } from './dst-notes.js';
export { EXIT, type ExitCode } from './exit-codes.js';
export type { CliIo } from './io.js';
export { runCli } from './main.js';
export { terminalSafe } from './terminal-text.js';
export { USAGE } from './usage.js';
