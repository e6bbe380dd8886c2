import { spawn } from 'node:child_process';
import { perlPath, setprivPath } from './binaries.js';
import { ServerStartError } from './errors.js';
import { groupMembers, type ProcEntry, serverTree, signal, stillRunning } from './proc.js';
import type { ServerDir } from './temp-dir.js';
import { waitFor } from './wait.js';

/** How to run and watch one local server process. */
export interface LocalProcessSpec {
  /** Name used in messages, e.g. `redis-server`. */
  name: string;
  command: string;
  args: string[];
  /** Run as this user (postgres refuses root). */
  runAs?: { uid: number; gid: number };
  cwd?: string;
  /** Ready when the output matches this. */
  readyLog?: RegExp;
  /** Ready when this resolves true (polled every 50 ms). */
  readyProbe?: () => Promise<boolean>;
  startTimeoutMs: number;
  /** Clean-shutdown signal (postgres: SIGINT = fast shutdown). */
  stopSignal: NodeJS.Signals;
  /** How long a clean shutdown may take before SIGKILL. Default 10 000. */
  stopTimeoutMs?: number;
  /**
   * Signal for crash-stop and close, sent to the leader; SIGKILL of the whole group follows if it
   * has not exited within 3 s. Default SIGKILL. Postgres uses SIGQUIT (immediate shutdown: no
   * checkpoint, crash recovery on the next start) so the postmaster reaps its backends itself.
   */
  crashSignal?: NodeJS.Signals;
  /** The dir whose owner file records the process group. */
  dir: ServerDir;
}

const TAIL_LINES = 40;
// setpgrp(0,0) puts the server in its own process group inside our session: signals to the group
// reach every child (postgres backends), and if we die while it is stopped the kernel sends the
// newly orphaned group SIGHUP+SIGCONT, so stopped processes still notice and exit.
const PERL_SETPGRP = 'setpgrp(0,0); exec { $ARGV[0] } @ARGV or die "exec $ARGV[0]: $!\\n"';

/**
 * One local server process in its own process group, started through
 * `setpriv --pdeathsig SIGKILL` so it dies with the thread that spawned it.
 */
export class LocalProcess {
  readonly spec: LocalProcessSpec;
  #pgid: number | undefined;
  #exited: Promise<void> = Promise.resolve();
  #tail: string[] = [];
  #partial = '';

  constructor(spec: LocalProcessSpec) {
    this.spec = spec;
  }

  /** Process group id (= pid of the server process) while it runs. */
  get pgid(): number | undefined {
    return this.#pgid;
  }

  /** The last lines of output, for error messages. */
  tail(): string {
    return [...this.#tail, this.#partial].filter(Boolean).join('\n');
  }

  /** Spawns the server and resolves when it is ready; on failure kills it and throws. */
  async start(): Promise<void> {
    const { spec } = this;
    this.#tail = [];
    this.#partial = '';
    const inner: string[] = setprivPath
      ? [
          setprivPath,
          ...(spec.runAs
            ? [`--reuid=${spec.runAs.uid}`, `--regid=${spec.runAs.gid}`, '--clear-groups']
            : []),
          '--pdeathsig',
          'SIGKILL',
          '--',
          spec.command,
          ...spec.args,
        ]
      : [spec.command, ...spec.args];
    const [file, args] = perlPath
      ? [perlPath, ['-e', PERL_SETPGRP, ...inner]]
      : [inner[0] as string, inner.slice(1)];
    const child = spawn(file, args, {
      cwd: spec.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Without perl, a new session (setsid) still gives the server its own process group.
      detached: !perlPath,
      ...(spec.runAs && !setprivPath ? { uid: spec.runAs.uid, gid: spec.runAs.gid } : {}),
    });
    const pgid = child.pid;
    let exitInfo: string | undefined;
    this.#exited = new Promise((resolve) => {
      child.once('exit', (code, sig) => {
        exitInfo = sig ? `signal ${sig}` : `exit code ${code}`;
        resolve();
      });
      child.once('error', (error) => {
        exitInfo = error.message;
        resolve();
      });
    });
    let matched = false;
    let window = '';
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      if (spec.readyLog && !matched) {
        window = (window + text).slice(-8192);
        if (spec.readyLog.test(window)) matched = true;
      }
      const lines = (this.#partial + text).split('\n');
      this.#partial = lines.pop() ?? '';
      this.#tail.push(...lines);
      if (this.#tail.length > TAIL_LINES) this.#tail.splice(0, this.#tail.length - TAIL_LINES);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    if (pgid === undefined) {
      await this.#exited;
      throw new ServerStartError(`${spec.name}: could not spawn ${file}: ${exitInfo}`, '');
    }
    this.#pgid = pgid;
    spec.dir.addGroup(pgid);
    let outcome: 'ready' | 'exited' | 'timeout';
    let cause: unknown;
    try {
      outcome = await waitFor(
        async () => {
          if (exitInfo !== undefined) return 'exited' as const;
          if (spec.readyLog && !matched) return false;
          if (spec.readyProbe && !(await spec.readyProbe())) return false;
          return 'ready' as const;
        },
        { timeoutMs: spec.startTimeoutMs, intervalMs: 25 },
      );
    } catch (error) {
      outcome = 'timeout';
      cause = (error as Error).cause;
    }
    if (outcome === 'ready') return;
    const reason =
      outcome === 'exited'
        ? `exited (${exitInfo}) before it was ready`
        : `did not become ready within ${spec.startTimeoutMs} ms`;
    await this.kill();
    throw new ServerStartError(`${spec.name} ${reason}`, this.tail(), { cause });
  }

  /** Clean stop (or the crash signal with `crash`); waits until every server process is gone. */
  async stop(crash = false): Promise<void> {
    const pgid = this.#pgid;
    if (pgid === undefined) return;
    if (crash) {
      await this.kill();
      return;
    }
    const tree = serverTree(pgid);
    signal(pgid, this.spec.stopSignal);
    this.#continue(pgid, tree); // a paused server must run to handle the signal
    const stopped = await this.#exitedWithin(this.spec.stopTimeoutMs ?? 10_000);
    if (!stopped) {
      await this.kill();
      return;
    }
    await this.#waitGone(pgid, tree);
  }

  /** Crash signal (see {@link LocalProcessSpec.crashSignal}), then SIGKILL; waits until gone. */
  async kill(): Promise<void> {
    const pgid = this.#pgid;
    if (pgid === undefined) return;
    const tree = serverTree(pgid);
    const sig = this.spec.crashSignal ?? 'SIGKILL';
    if (sig !== 'SIGKILL') {
      signal(pgid, sig);
      this.#continue(pgid, tree);
      if (await this.#exitedWithin(3000)) {
        await this.#waitGone(pgid, tree);
        return;
      }
    }
    signal(-pgid, 'SIGKILL');
    for (const entry of tree) if (stillRunning(entry)) signal(entry.pid, 'SIGKILL');
    await this.#exited;
    await this.#waitGone(pgid, tree);
  }

  /**
   * SIGSTOP to the group and to every descendant (postgres backends run in sessions of their
   * own); resolves when all of them are stopped. Records them so the reaper can free them if we
   * die while they are stopped.
   */
  async pause(): Promise<void> {
    const pgid = this.#pgid;
    if (pgid === undefined) return;
    signal(-pgid, 'SIGSTOP');
    signal(pgid, 'SIGSTOP');
    const tree = await waitFor(
      () => {
        const current = serverTree(pgid);
        const running = current.filter((e) => e.state !== 'T' && e.state !== 't');
        for (const entry of running) signal(entry.pid, 'SIGSTOP');
        return running.length === 0 && current.length > 0 ? current : false;
      },
      { timeoutMs: 5000, intervalMs: 10, message: `${this.spec.name}: every process stopped` },
    );
    this.spec.dir.setPaused(tree);
  }

  /** SIGCONT to the group and every descendant. */
  resume(): void {
    const pgid = this.#pgid;
    if (pgid === undefined) return;
    this.#continue(pgid, serverTree(pgid));
    this.spec.dir.setPaused([]);
  }

  #continue(pgid: number, tree: ProcEntry[]): void {
    for (const entry of tree) if (entry.pid !== pgid) signal(entry.pid, 'SIGCONT');
    signal(-pgid, 'SIGCONT');
  }

  #exitedWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      this.#exited.then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), ms);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  /** Waits until the group and every process of `tree` are gone, SIGKILLing leftovers. */
  async #waitGone(pgid: number, tree: ProcEntry[]): Promise<void> {
    await waitFor(
      () => {
        const left = [...groupMembers(pgid), ...tree.filter(stillRunning)];
        // The leader has exited: kill leftovers (and members forked while we were signalling).
        if (left.length > 0) signal(-pgid, 'SIGKILL');
        for (const entry of left) signal(entry.pid, 'SIGKILL');
        return left.length === 0;
      },
      {
        timeoutMs: 15_000,
        intervalMs: 20,
        message: `${this.spec.name}: processes of ${pgid} gone`,
      },
    );
    this.spec.dir.removeGroup(pgid);
    this.spec.dir.setPaused([]);
    this.#pgid = undefined;
  }
}
