import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import {
  groupMembers,
  isAlive,
  type ProcEntry,
  readExe,
  readProc,
  signal,
  stillRunning,
} from './proc.js';

const PREFIX = 'fleetcron-testkit-';
const OWNER_FILE = 'testkit-owner.json';
/** Executables the reaper may kill: only server processes the testkit starts. */
const SERVER_EXES = new Set([
  'postgres',
  'postmaster',
  'redis-server',
  'etcd',
  'pgbouncer',
  'perl',
  'setpriv',
]);

interface OwnerRecord {
  ownerPid: number;
  ownerStartTime: number;
  groups: number[];
  /** Processes stopped by pause() (postgres backends leave the group): pid and start time. */
  paused?: { pid: number; startTime: number }[];
}

/** Directories that may hold testkit temp dirs: `os.tmpdir()` and `/dev/shm` when present. */
export function tempRoots(): string[] {
  const roots = [tmpdir()];
  if (existsSync('/dev/shm')) roots.push('/dev/shm');
  return roots;
}

const live = new Map<string, ServerDir>();
let exitHookInstalled = false;

/**
 * A per-server temp dir `<root>/fleetcron-testkit-<pid>-<random>` with an owner file that records
 * this process and the server's process groups, so a later run can reap both after a kill -9.
 */
export class ServerDir {
  readonly path: string;
  #groups = new Set<number>();
  #paused: { pid: number; startTime: number }[] = [];
  #removed = false;

  constructor(root: string, owner?: { uid: number; gid: number }) {
    this.path = mkdtempSync(join(root, `${PREFIX}${process.pid}-`));
    if (owner) chownSync(this.path, owner.uid, owner.gid);
    this.#write();
    live.set(this.path, this);
    installExitHook();
  }

  /** Records a server process group (so the reaper can kill it). */
  addGroup(pgid: number): void {
    this.#groups.add(pgid);
    this.#write();
  }

  /** Forgets a process group that is gone. */
  removeGroup(pgid: number): void {
    if (this.#groups.delete(pgid)) this.#write();
  }

  /** Records the processes pause() stopped (empty array: none). */
  setPaused(entries: ProcEntry[]): void {
    if (entries.length === 0 && this.#paused.length === 0) return;
    this.#paused = entries.map((e) => ({ pid: e.pid, startTime: e.startTime }));
    this.#write();
  }

  /** Processes recorded as paused. */
  get paused(): { pid: number; startTime: number }[] {
    return [...this.#paused];
  }

  /** Process groups currently recorded. */
  get groups(): number[] {
    return [...this.#groups];
  }

  /** Removes the directory (idempotent). */
  remove(): void {
    if (this.#removed) return;
    this.#removed = true;
    live.delete(this.path);
    rmSync(this.path, { recursive: true, force: true, maxRetries: 3 });
  }

  #write(): void {
    if (this.#removed) return;
    const record: OwnerRecord = {
      ownerPid: process.pid,
      ownerStartTime: readProc(process.pid)?.startTime ?? 0,
      groups: [...this.#groups],
      paused: this.#paused,
    };
    const file = join(this.path, OWNER_FILE);
    writeFileSync(`${file}.tmp`, JSON.stringify(record));
    renameSync(`${file}.tmp`, file);
  }
}

/** On a normal exit, kill what is left and remove the dirs (kill -9 is handled by the reaper). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const dir of live.values()) {
      for (const pgid of dir.groups) signal(-pgid, 'SIGKILL');
      for (const entry of dir.paused) signal(entry.pid, 'SIGKILL');
    }
    for (const dir of [...live.values()]) {
      try {
        dir.remove();
      } catch {
        // best effort at exit
      }
    }
  });
}

/** What {@link reapStale} cleaned up. */
export interface ReapReport {
  /** Temp dirs removed. */
  dirs: string[];
  /** Process groups killed. */
  groups: number[];
  /** Single processes killed (servers' children that were paused when their owner died). */
  processes: number[];
}

/** True when the owner recorded in a temp dir is gone (or its pid was reused). */
function ownerDead(pid: number, record: OwnerRecord | undefined): boolean {
  if (pid === process.pid) return false;
  if (!isAlive(pid)) return true;
  if (!record?.ownerStartTime) return false;
  const entry = readProc(pid);
  return entry !== undefined && entry.startTime !== record.ownerStartTime;
}

function isServerExe(pid: number): boolean {
  const exe = readExe(pid);
  return exe !== undefined && SERVER_EXES.has(basename(exe).replace(/ \(deleted\)$/, ''));
}

/** Kills a recorded group, but only if its processes are server processes. */
function killGroup(pgid: number): boolean {
  const members = groupMembers(pgid);
  if (members.length === 0 || !members.some((m) => isServerExe(m.pid))) return false;
  return signal(-pgid, 'SIGKILL');
}

/** Kills a process recorded as paused if it is still that (same start time) server process. */
function killPaused(entry: { pid: number; startTime: number }): boolean {
  const now = readProc(entry.pid);
  if (!now || !stillRunning({ ...now, startTime: entry.startTime }) || !isServerExe(entry.pid)) {
    return false;
  }
  return signal(entry.pid, 'SIGKILL');
}

/**
 * Removes testkit temp dirs whose owner process is dead, after killing any server process group
 * recorded in them (SIGKILL; also frees servers that were paused when their owner died).
 * Runs automatically once per process before the first local server starts.
 */
export function reapStale(): ReapReport {
  const report: ReapReport = { dirs: [], groups: [], processes: [] };
  for (const root of tempRoots()) {
    let names: string[];
    try {
      names = readdirSync(root);
    } catch {
      continue;
    }
    for (const name of names) {
      const match = /^fleetcron-testkit-(\d+)-/.exec(name);
      if (!match) continue;
      const dir = join(root, name);
      let record: OwnerRecord | undefined;
      try {
        record = JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8')) as OwnerRecord;
      } catch {
        record = undefined;
      }
      if (!ownerDead(Number(match[1]), record)) continue;
      for (const pgid of record?.groups ?? []) {
        if (killGroup(pgid)) report.groups.push(pgid);
      }
      for (const entry of record?.paused ?? []) {
        if (killPaused(entry)) report.processes.push(entry.pid);
      }
      try {
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
        report.dirs.push(dir);
      } catch {
        // another process is reaping it, or it is not ours to remove
      }
    }
  }
  return report;
}

let reaped = false;

/** Runs {@link reapStale} once per process. */
export function reapStaleOnce(): void {
  if (reaped) return;
  reaped = true;
  try {
    reapStale();
  } catch {
    // reaping is best effort
  }
}
