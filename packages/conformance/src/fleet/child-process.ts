import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Elector, Lock, Store } from '@fleetcron/core';
import type { ProcessClient } from '../types.js';
import { FROZEN_MARKER, type InstanceChildConfig } from './child-config.js';
import type { RequesterConfig } from './child-requester.js';
import { withElector } from './leader-remote.js';
import { remoteLockInfo, remoteStoreInfo, serveBackend } from './remote.js';

/** A fleet instance running in a child process (see `child-instance.ts`). */
export interface InstanceChild {
  readonly pid: number;
  /** Resolves once the child blocks at its freeze point; rejects after `timeoutMs` or on exit. */
  waitFrozen(timeoutMs: number): Promise<void>;
  /** Starts an instance made with `startOnGo`; resolves once it started. */
  go(timeoutMs: number): Promise<void>;
  /** SIGSTOP: the real freeze. */
  freeze(): void;
  /** Lets a frozen child go: SIGCONT, and the byte its blocking read waits for. */
  thaw(): void;
  /** Asks the instance to stop, waits for the process to exit; resolves its exit code. */
  stop(timeoutMs: number): Promise<number | null>;
  /** SIGCONT + SIGKILL if it still runs (cleanup, or the fault itself); resolves on exit. */
  kill(): Promise<void>;
  /** Everything the child wrote to stdout and stderr so far. */
  output(): string;
}

/** The child scripts: from the sources, and as built (their tsup entry names). */
const SCRIPTS = {
  instance: { source: './child-instance.ts', built: './fleet-child.js' },
  requester: { source: './child-requester.ts', built: './fleet-requester.js' },
} as const;

/**
 * Node arguments that run a child script from TypeScript sources or from the build;
 * `typescriptModule`: the child imports a `.ts` module (needs tsx even from the build).
 */
export function childCommand(script: keyof typeof SCRIPTS, typescriptModule = false): string[] {
  const fromSource = import.meta.url.endsWith('.ts');
  const path = fileURLToPath(
    new URL(fromSource ? SCRIPTS[script].source : SCRIPTS[script].built, import.meta.url),
  );
  const args: string[] = [];
  if (fromSource || typescriptModule) {
    let tsx: string;
    try {
      tsx = createRequire(import.meta.url).resolve('tsx');
    } catch (error) {
      throw new Error(
        'the fleet freeze scenarios start TypeScript child processes through tsx: install it (pnpm add -D tsx)',
        { cause: error },
      );
    }
    args.push('--import', tsx);
    if (fromSource) args.push('--conditions=source');
  }
  return [...args, path];
}

/** Resolves when `child` sends `{ t: type }`; rejects if it exits first or after `timeoutMs`. */
function waitForMessage(
  child: ChildProcess,
  type: string,
  timeoutMs: number,
  output: () => string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    };
    const onMessage = (m: unknown) => {
      if ((m as { t?: string } | null)?.t === type) done();
    };
    const onExit = (code: number | null) =>
      done(new Error(`instance child exited (${code}) before '${type}':\n${output()}`));
    const timer = setTimeout(
      () =>
        done(new Error(`no '${type}' from the instance child in ${timeoutMs} ms:\n${output()}`)),
      timeoutMs,
    );
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

/** Whether `backend` describes a client for the child to open (not a client of this process). */
function isProcessClient(backend: object): backend is ProcessClient {
  return 'module' in backend && 'exportName' in backend;
}

/**
 * Starts a fleet instance in a child process. Its lock and store calls run here, on `lock` (its
 * own client of the backend) and `store` (`null`: the instance runs lock only), unless they are
 * {@link ProcessClient}s: then the child opens them and calls the backend itself. With `elector`,
 * the child runs in leader mode and its elector steps run here. Resolves once the instance
 * started.
 */
export async function startInstanceChild(
  config: Omit<InstanceChildConfig, 'lock' | 'store' | 'elector'>,
  lock: Lock | ProcessClient,
  store: Store | ProcessClient | null,
  timeoutMs: number,
  elector?: Elector,
): Promise<InstanceChild> {
  const ownLock = isProcessClient(lock) ? lock : null;
  const ownStore = store && isProcessClient(store) ? store : null;
  if (elector && ownLock) {
    throw new Error(
      "startInstanceChild: the elector's steps share the parent lock's channel: pass a Lock, not a ProcessClient",
    );
  }
  const full: InstanceChildConfig = {
    ...config,
    lock: ownLock ? { own: ownLock } : { remote: remoteLockInfo(lock as Lock) },
    ...(ownStore ? { store: { own: ownStore } } : {}),
    ...(store && !ownStore ? { store: { remote: remoteStoreInfo(store as Store) } } : {}),
    ...(elector
      ? { elector: { backend: elector.backend, capabilities: elector.capabilities } }
      : {}),
  };
  const typescript = [config.instanceModule.url, ownLock?.module, ownStore?.module].some((url) =>
    url?.endsWith('.ts'),
  );
  const command = childCommand('instance', typescript);
  const child = spawn(process.execPath, [...command, JSON.stringify(full)], {
    stdio: ['pipe', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  let frozen = false;
  const frozenWaiters: (() => void)[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (!frozen && out.includes(FROZEN_MARKER)) {
      frozen = true;
      for (const wake of frozenWaiters.splice(0)) wake();
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stdin?.on('error', () => {}); // a child that died must not crash the test process
  child.on('error', () => {});
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const servedLock = ownLock ? null : (lock as Lock);
  const served = elector && servedLock ? withElector(servedLock, elector) : servedLock;
  const stopServing = serveBackend(child, served, ownStore ? null : (store as Store | null));
  exited.then(stopServing);
  const output = () => out;
  const alive = () => child.exitCode === null && child.signalCode === null;
  await waitForMessage(child, 'ready', timeoutMs, output);

  return {
    pid: child.pid ?? -1,
    output,
    waitFrozen(ms) {
      if (frozen) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new Error(`the instance never reached its freeze point in ${ms} ms:\n${out}`));
        }, ms);
        frozenWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
        exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`the instance child exited (${code}) before freezing:\n${out}`));
        });
      });
    },
    go(ms) {
      const started = waitForMessage(child, 'started', ms, output);
      child.send({ t: 'go' });
      return started;
    },
    freeze() {
      child.kill('SIGSTOP');
    },
    thaw() {
      child.stdin?.write('g');
      child.kill('SIGCONT');
    },
    async stop(ms) {
      if (!alive()) return exited;
      child.send({ t: 'stop' });
      const timer = setTimeout(() => {
        out += `\n[no exit ${ms} ms after stop: killed]\n`;
        child.kill('SIGKILL');
      }, ms);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill() {
      if (alive()) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }
      await exited;
    },
  };
}

/**
 * Runs `child-requester.ts` in its own process: a process that registers no job asks the fleet
 * to run `job` through a `FleetClient` over `store` (served from here). Resolves the request id
 * once the child has asked and exited cleanly; rejects with its output otherwise.
 */
export async function requestRunFromChild(
  config: Omit<RequesterConfig, 'store'>,
  store: Store,
  timeoutMs: number,
): Promise<string> {
  const full: RequesterConfig = { ...config, store: remoteStoreInfo(store) };
  const child = spawn(process.execPath, [...childCommand('requester'), JSON.stringify(full)], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.on('error', () => {});
  let id: string | null = null;
  child.on('message', (m: unknown) => {
    const message = m as { t?: string; id?: string } | null;
    if (message?.t === 'requested') id = String(message.id);
  });
  const stopServing = serveBackend(child, null, store);
  const timer = setTimeout(() => {
    out += `\n[no exit in ${timeoutMs} ms: killed]\n`;
    child.kill('SIGKILL');
  }, timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(timer);
  stopServing();
  if (code !== 0 || id === null) {
    throw new Error(`the requester process failed (exit ${code}):\n${out}`);
  }
  return id;
}
