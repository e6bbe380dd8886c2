import { InvalidOptionError } from './errors.js';
import type { JsonValue } from './schedules/schedule.js';

/** How deep plain JSON data may nest. */
const MAX_DATA_DEPTH = 64;

/**
 * Checks that `data` is plain JSON (no `undefined`, functions, Dates, NaN, cycles) of at most
 * `maxBytes` bytes as UTF-8 JSON: the payload of a stored schedule or a run request.
 *
 * @throws InvalidOptionError naming the field (`field`, or the path inside it, e.g. `data.when`).
 */
export function checkJsonData(data: unknown, field: string, maxBytes: number): JsonValue {
  const problem = jsonProblem(data, field, 0);
  if (problem) {
    throw new InvalidOptionError(problem.field, `${problem.message} ${field} must be plain JSON.`);
  }
  const bytes = Buffer.byteLength(JSON.stringify(data), 'utf8');
  if (bytes > maxBytes) {
    throw new InvalidOptionError(
      field,
      `is ${bytes} bytes as JSON, over the bound of ${maxBytes} (${maxBytes / 1024} KiB); store a reference (a key, a URL) to larger content instead.`,
    );
  }
  return data as JsonValue;
}

function jsonProblem(
  value: unknown,
  field: string,
  depth: number,
): { field: string; message: string } | null {
  if (depth > MAX_DATA_DEPTH)
    return { field, message: `nests deeper than ${MAX_DATA_DEPTH} levels.` };
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return null;
  if (typeof value === 'number') {
    return Number.isFinite(value)
      ? null
      : { field, message: `is ${value}, which JSON cannot hold.` };
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const p = jsonProblem(item, `${field}[${i}]`, depth + 1);
      if (p) return p;
    }
    return null;
  }
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      return {
        field,
        message: `is a ${proto?.constructor?.name ?? 'non-plain'} object, not a plain object.`,
      };
    }
    for (const [key, item] of Object.entries(value)) {
      const p = jsonProblem(item, `${field}.${key}`, depth + 1);
      if (p) return p;
    }
    return null;
  }
  return { field, message: `is a ${typeof value}, which JSON cannot hold.` };
}
