import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** One entry of the process table (Linux `/proc`). */
export interface ProcEntry {
  pid: number;
  /** `R`, `S`, `D`, `T` (stopped), `t`, `Z` (zombie), ... */
  state: string;
  ppid: number;
  pgrp: number;
  /** Start time in clock ticks since boot; with the pid it identifies a process. */
  startTime: number;
}

/** True when the process table can be read (Linux). */
export const hasProcFs = (() => {
  try {
    readFileSync('/proc/self/stat', 'utf8');
    return true;
  } catch {
    return false;
  }
})();

/** Reads `/proc/PID/stat`, or undefined when the process does not exist. */
export function readProc(pid: number): ProcEntry | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may contain spaces and parentheses: split after the last ')'.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    pid,
    state: rest[0] ?? '?',
    ppid: Number(rest[1]),
    pgrp: Number(rest[2]),
    startTime: Number(rest[19]),
  };
}

/** The executable of a process (needs the right to read it), or undefined. */
export function readExe(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return undefined;
  }
}

/** Every live (non-zombie) process of process group `pgrp`. */
export function groupMembers(pgrp: number): ProcEntry[] {
  if (!hasProcFs)
    return isAlive(-pgrp) ? [{ pid: pgrp, state: '?', ppid: 0, pgrp, startTime: 0 }] : [];
  return processTable().filter((entry) => entry.pgrp === pgrp);
}

/** True when a signal could be sent to `pid` (negative: a process group). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Sends `signal` to `pid` (negative: a process group), ignoring "no such process". */
export function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Every live process of the table, read once. */
export function processTable(): ProcEntry[] {
  if (!hasProcFs) return [];
  const table: ProcEntry[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const entry = readProc(pid);
    if (entry && entry.state !== 'Z' && entry.state !== 'X') table.push(entry);
  }
  return table;
}

/**
 * The server's processes: members of process group `pgid` plus every descendant of them. Needed
 * because postgres children call setsid() and leave the postmaster's group.
 */
export function serverTree(pgid: number): ProcEntry[] {
  const table = processTable();
  if (table.length === 0) return groupMembers(pgid);
  const byParent = new Map<number, ProcEntry[]>();
  for (const entry of table) {
    const siblings = byParent.get(entry.ppid);
    if (siblings) siblings.push(entry);
    else byParent.set(entry.ppid, [entry]);
  }
  const found = new Map<number, ProcEntry>();
  const queue = table.filter((e) => e.pgrp === pgid);
  while (queue.length > 0) {
    const entry = queue.pop() as ProcEntry;
    if (found.has(entry.pid)) continue;
    found.set(entry.pid, entry);
    queue.push(...(byParent.get(entry.pid) ?? []));
  }
  return [...found.values()];
}

/** True when `entry` (pid + start time) still runs and is not a zombie. */
export function stillRunning(entry: ProcEntry): boolean {
  const now = readProc(entry.pid);
  return (
    now !== undefined && now.startTime === entry.startTime && now.state !== 'Z' && now.state !== 'X'
  );
}
