/**
 * Runs a command's `main` and exits with the code it answers: 1, with the stack on stderr, when
 * it throws (the benchmarks' entry points).
 */
export function exitWith(main: () => Promise<number>): void {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(
        `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
