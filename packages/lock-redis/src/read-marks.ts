import type { BatchCall } from './batch-calls.js';

/**
 * Most keys one `readMarks` script call reads. Two O(1) reads per key: a call of 500 keys keeps
 * the server busy well under a millisecond, so other clients get a turn between the calls of a
 * large read (all written at once, as a batch's calls are).
 */
export const READ_MARKS_CALL_SIZE = 500;

/**
 * Writes the marks of one `READ_MARKS` reply (`<now>|<mark>|...`, empty for no mark) to
 * `marks[call.positions[i]]`, and answers the reply's Redis time. Throws on a reply of the
 * wrong shape (the batch then fails as a whole).
 */
export function decodeMarks(call: BatchCall, reply: unknown, marks: (number | null)[]): number {
  const parts = typeof reply === 'string' ? reply.split('|') : [];
  const now = Number(parts[0]);
  if (parts.length !== call.positions.length + 1 || !Number.isSafeInteger(now)) {
    throw new Error(
      `readMarks: a script answered ${parts.length - 1} marks for ${call.positions.length} keys`,
    );
  }
  call.positions.forEach((position, i) => {
    const text = parts[i + 1]!;
    marks[position] = text === '' ? null : Number(text);
  });
  return now;
}
