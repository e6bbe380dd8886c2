/** Where a command writes: stdout for results, stderr for errors and notes. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Environment (`FLEETCRON_URL`). */
  env: Record<string, string | undefined>;
}

/** The process's streams and environment. */
export const processIo: CliIo = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
};
