/** Number formatting for the report. Missing or non-finite values print as `n/a`. */

const isNumber = (v: number | null | undefined): v is number =>
  typeof v === 'number' && Number.isFinite(v);

/** An integer with thousands separators: `12 345`. */
export function int(value: number | null | undefined): string {
  if (!isNumber(value)) return 'n/a';
  return Math.round(value)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
}

/** Milliseconds: 3 decimals below 0.1 ms, 2 below 10 ms, 1 below 100, none above. */
export function ms(value: number | null | undefined): string {
  if (!isNumber(value)) return 'n/a';
  if (value < 0.1) return value.toFixed(3);
  if (value < 10) return value.toFixed(2);
  if (value < 100) return value.toFixed(1);
  return int(value);
}

/** A ratio as `0.87×`. */
export function times(value: number | null | undefined): string {
  return isNumber(value) ? `${value.toFixed(2)}×` : 'n/a';
}

/** Bytes as MiB with one decimal. */
export function mib(bytes: number | null | undefined): string {
  return isNumber(bytes) ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : 'n/a';
}

/** A percentage with 2 decimals. */
export function percent(value: number | null | undefined): string {
  return isNumber(value) ? `${value.toFixed(2)} %` : 'n/a';
}
