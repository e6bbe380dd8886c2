/** A fire time in UTC and in the job's zone. */
export interface ZonedTime {
  /** Epoch ms. */
  at: number;
  /** ISO 8601 in UTC, e.g. `2026-03-29T01:00:00.000Z`. */
  utc: string;
  /** Wall-clock time in `zone` with its offset, e.g. `2026-03-29 03:00:00 +02:00`. */
  local: string;
  /** The IANA zone of `local`. */
  zone: string;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function formatIn(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formats.set(zone, format);
  }
  return format;
}

/** `at` as UTC ISO text and as wall-clock text with its UTC offset in `zone`. */
export function zonedTime(at: number, zone: string): ZonedTime {
  const parts = Object.fromEntries(
    formatIn(zone)
      .formatToParts(new Date(at))
      .map((p) => [p.type, p.value]),
  ) as Record<string, string>;
  const wall = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  const offsetMin = Math.round((wall - Math.floor(at / 1000) * 1000) / 60_000);
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return {
    at,
    utc: new Date(at).toISOString(),
    local: `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${offset}`,
    zone,
  };
}
