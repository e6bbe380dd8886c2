/**
 * Settles like `promise`, or rejects after `ms` with a timeout error. The losing promise keeps
 * a handler (through `Promise.race`), so its late rejection is never unhandled; the timer is
 * unref'd and cleared, so it never keeps the process alive.
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} timed out after ${ms} ms (commandTimeoutMs)`)),
      ms,
    );
    timer.unref();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
