import { InvalidOptionError } from '@fleetcron/core';

/** Longest `note` a mutation may carry, characters. */
export const MAX_NOTE_LENGTH = 1000;

/**
 * Reads a mutation's body: at most `maxBytes` of JSON, an object (an empty body is `{}`).
 * @throws InvalidOptionError (field `body`) when it is larger, not JSON or not an object.
 */
export async function readJsonObject(
  request: Request,
  maxBytes: number,
): Promise<Record<string, unknown>> {
  const text = await request.text();
  if (Buffer.byteLength(text) > maxBytes) {
    throw new InvalidOptionError('body', `must be at most ${maxBytes} bytes of JSON.`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text === '' ? '{}' : text);
  } catch {
    throw new InvalidOptionError('body', 'must be JSON, e.g. {}.');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidOptionError('body', 'must be a JSON object, e.g. {}.');
  }
  return body as Record<string, unknown>;
}

/**
 * The optional `note` of a mutation's body (why, for the audit line): `undefined` when absent or
 * empty. @throws InvalidOptionError (field `note`) for a non-string or one over
 * {@link MAX_NOTE_LENGTH} characters.
 */
export function noteOf(body: Record<string, unknown>): string | undefined {
  const note = body.note;
  if (note === undefined || note === null || note === '') return undefined;
  if (typeof note !== 'string' || note.length > MAX_NOTE_LENGTH) {
    throw new InvalidOptionError(
      'note',
      `must be a string of at most ${MAX_NOTE_LENGTH} characters, got ${typeof note === 'string' ? `${note.length} characters` : typeof note}.`,
    );
  }
  return note;
}
