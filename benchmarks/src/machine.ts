import os from 'node:os';
import type { MachineInfo } from './report/report.js';

/** Describes this machine for the report. */
export function machineInfo(pinned: boolean): MachineInfo {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    model: cpus[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage: os.loadavg()[0] ?? 0,
    pinned,
  };
}
