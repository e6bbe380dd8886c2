import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * A fresh instance id: `${hostname}-${pid}-${random}`. The random part keeps two schedulers of
 * one process (or a restarted process that reuses a pid) apart, so a restarted instance never
 * replays an old claim as its own.
 */
export function defaultInstanceId(): string {
  let host = 'host';
  try {
    host = hostname() || host;
  } catch {
    // keep the fallback
  }
  return `${host}-${process.pid}-${randomBytes(4).toString('hex')}`;
}
