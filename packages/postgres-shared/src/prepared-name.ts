import { createHash } from 'node:crypto';

/**
 * A prepared-statement name unique to `text` (pg refuses one name for two texts on a
 * connection, and two adapters on one pool may use different schemas).
 */
export function preparedName(operation: string, text: string): string {
  return `fleetcron_${operation}_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
}
