// Text of "naive" wall-clock times: epoch ms holding a local reading written as if it were UTC,
// as `wallClock(at, zone)` from @fleetcron/core returns them.

/** `YYYY-MM-DD HH:MM:SS` of a naive wall-clock time. */
export function formatWall(wall: number): string {
  return new Date(wall).toISOString().slice(0, 19).replace('T', ' ');
}

/** `HH:MM` (or `HH:MM:SS` when the seconds are not zero) of a naive wall-clock time. */
export function formatWallTime(wall: number): string {
  const text = new Date(wall).toISOString().slice(11, 19);
  return text.endsWith(':00') ? text.slice(0, 5) : text;
}
