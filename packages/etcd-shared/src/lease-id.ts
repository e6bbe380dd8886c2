/** A random lease id in `[1, 2^53)`: exact as a JavaScript number and as an int64. */
export function randomLeaseId(): number {
  return 1 + Math.floor(Math.random() * (Number.MAX_SAFE_INTEGER - 1));
}
