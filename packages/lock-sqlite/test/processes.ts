import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./claimer-process.ts', import.meta.url));

/** One line of a claimer's ledger. */
export type LedgerLine =
  | { fireAt: number; status: 'won' | 'busy' | 'lost'; token: number | null; ms: number }
  | { fireAt: number; error: string };

/** A claimer process and the ledger lines it printed so far. */
export interface Claimer {
  owner: string;
  child: ChildProcess;
  lines: LedgerLine[];
  ready: Promise<void>;
  exited: Promise<number | null>;
}

/** Starts a claimer process (see claimer-process.ts). */
export function startClaimer(args: {
  file: string;
  owner: string;
  key: string;
  first: number;
  count: number;
  leaseMs?: number;
  mode?: 'worker' | 'inline';
  busyTimeoutMs?: number;
}): Claimer {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--conditions=source',
      CHILD,
      JSON.stringify({ leaseMs: 60_000, mode: 'worker', busyTimeoutMs: 10_000, ...args }),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines: LedgerLine[] = [];
  let resolveReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    resolveReady = resolve;
  });
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop() ?? '';
    for (const part of parts) {
      const line = JSON.parse(part) as LedgerLine | { ready: true };
      if ('ready' in line) resolveReady();
      else lines.push(line);
    }
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return { owner: args.owner, child, lines, ready, exited };
}
