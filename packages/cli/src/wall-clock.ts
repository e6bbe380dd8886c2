const formats = new Map<string, Intl.DateTimeFormat>();

function format(zone: string): Intl.DateTimeFormat {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(zone, f);
  }
  return f;
}

/**
 * The wall-clock reading of instant `at` in `zone`, as "naive" epoch ms (the local reading
 * written as if it were UTC). `zone` must be a zone Intl knows (core's `cron()` checked it).
 */
export function wallClock(at: number, zone: string): number {
  const parts: Record<string, number> = {};
  for (const part of format(zone).formatToParts(at)) parts[part.type] = Number(part.value);
  const wall = Date.UTC(
    2000,
    (parts.month ?? 1) - 1,
    parts.day ?? 1,
    parts.hour ?? 0,
    parts.minute ?? 0,
    parts.second ?? 0,
  );
  return new Date(wall).setUTCFullYear(parts.year ?? 1970) + (((at % 1000) + 1000) % 1000);
}

/** `YYYY-MM-DD HH:MM:SS` of a naive wall-clock time. */
export function formatWall(wall: number): string {
  return new Date(wall).toISOString().slice(0, 19).replace('T', ' ');
}

/** `HH:MM` (or `HH:MM:SS` when the seconds are not zero) of a naive wall-clock time. */
export function formatWallTime(wall: number): string {
  const text = new Date(wall).toISOString().slice(11, 19);
  return text.endsWith(':00') ? text.slice(0, 5) : text;
}
