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
  if (!hasProcFs) return isAlive(-pgrp) ? [{ pid: pgrp, state: '?', ppid: 0, pgrp, startTime: 0 }] : [];
  const members: ProcEntry[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const entry = readProc(pid);
    if (entry && entry.pgrp === pgrp && entry.state !== 'Z' && entry.state !== 'X') {
      members.push(entry);
    }
  }
  return members;
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
