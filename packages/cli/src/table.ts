import { terminalSafe } from './terminal-text.js';

/**
 * Formats rows as a plain-text table with a header, columns padded to their widest cell. Cells
 * are made terminal-safe first ({@link terminalSafe}), so the padding counts what is shown.
 */
export function table(
  header: readonly string[],
  unsafeRows: ReadonlyArray<readonly string[]>,
): string {
  const rows = unsafeRows.map((row) => row.map(terminalSafe));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
