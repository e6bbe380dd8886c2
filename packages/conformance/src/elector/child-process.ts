import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Elector } from '@fleetcron/core';
import type { CandidateChildConfig } from './child-config.js';
import { serveElector } from './remote-elector.js';

/** A participant running in a child process (see `child-candidate.ts`). */
export interface CandidateChild {
  readonly pid: number;
  /** SIGSTOP: a real freeze. */
  freeze(): void;
  /** SIGCONT. */
  thaw(): void;
  /** SIGKILL; resolves once the process is gone. */
  kill(): Promise<void>;
  /** Asks it to resign and exit; resolves the exit code (SIGKILL after `timeoutMs`). */
  stop(timeoutMs: number): Promise<number | null>;
  /** Everything it wrote to stdout and stderr. */
  output(): string;
}

/** Node arguments that run the child script from the TypeScript sources or from the build. */
function childCommand(config: Omit<CandidateChildConfig, 'elector'>): string[] {
  const fromSource = import.meta.url.endsWith('.ts');
  const script = fileURLToPath(
    new URL(fromSource ? './child-candidate.ts' : './elector-child.js', import.meta.url),
  );
  const args: string[] = [];
  if (fromSource || config.candidateModule.url.endsWith('.ts')) {
    let tsx: string;
    try {
      tsx = createRequire(import.meta.url).resolve('tsx');
    } catch (error) {
      throw new Error(
        'the elector kill and freeze scenarios start TypeScript child processes through tsx: install it (pnpm add -D tsx)',
        { cause: error },
      );
    }
    args.push('--import', tsx);
    if (fromSource) args.push('--conditions=source');
  }
  return [...args, script];
}

/** Resolves when `child` sends `{ t: 'ready' }`; rejects if it exits first or after `ms`. */
function ready(child: ChildProcess, ms: number, output: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    };
    const onMessage = (m: unknown) => {
      if ((m as { t?: string } | null)?.t === 'ready') done();
    };
    const onExit = (code: number | null) =>
      done(new Error(`election child exited (${code}) before it was ready:\n${output()}`));
    const timer = setTimeout(
      () => done(new Error(`election child not ready in ${ms} ms:\n${output()}`)),
      ms,
    );
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

/**
 * Starts a participant in a child process; its elector steps run here on `elector` (its own
 * client of the backend). Resolves once it campaigns.
 */
export async function startCandidateChild(
  config: Omit<CandidateChildConfig, 'elector'>,
  elector: Elector,
  timeoutMs: number,
): Promise<CandidateChild> {
  const full: CandidateChildConfig = {
    ...config,
    elector: { backend: elector.backend, capabilities: elector.capabilities },
  };
  const child = spawn(process.execPath, [...childCommand(config), JSON.stringify(full)], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.on('error', () => {}); // a child that died must not crash the test process
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const stopServing = serveElector(child, elector);
  exited.then(stopServing);
  const alive = () => child.exitCode === null && child.signalCode === null;
  const output = () => out;
  await ready(child, timeoutMs, output);
  return {
    pid: child.pid ?? -1,
    output,
    freeze: () => child.kill('SIGSTOP'),
    thaw: () => child.kill('SIGCONT'),
    async kill() {
      if (alive()) child.kill('SIGKILL');
      await exited;
    },
    async stop(ms) {
      if (!alive()) return exited;
      child.kill('SIGCONT');
      child.send({ t: 'stop' });
      const timer = setTimeout(() => {
        out += `\n[no exit ${ms} ms after stop: killed]\n`;
        child.kill('SIGKILL');
      }, ms);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
