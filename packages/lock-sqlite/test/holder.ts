import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./hold-write-lock.mjs', import.meta.url));

/** A separate OS process holding the write lock of a SQLite file (`BEGIN IMMEDIATE`, never committed). */
export interface WriteLockHolder {
  /** SIGKILLs the process mid-transaction and waits for it to be gone. */
  kill(): Promise<void>;
}

/**
 * Starts a process that takes the write lock of `file` and resolves once it holds it. With
 * `write: true` it also writes an uncommitted row, so killing it leaves a transaction to roll back.
 */
export async function holdWriteLock(file: string, write = false): Promise<WriteLockHolder> {
  const child: ChildProcess = spawn(process.execPath, [SCRIPT, file, write ? 'write' : ''], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('held')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`write-lock holder exited early (${code})`)));
  });
  return {
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
