/** Markdown rendering of tables. Pure. */

/** Column alignment. */
export type Align = 'left' | 'right';

/** Escapes a cell: pipes and newlines would break the table. */
export function cell(value: string): string {
  return value.replaceAll('|', '\\|').replace(/\r?\n/g, ' ');
}

/**
 * A GitHub-flavoured markdown table. `align` per column (default: left for the first column,
 * right for the others, which suits "name | figures" tables). Rows shorter than the header are
 * padded with empty cells.
 */
export function table(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  align?: readonly Align[],
): string {
  const aligns = headers.map((_, i) => align?.[i] ?? (i === 0 ? 'left' : 'right'));
  const line = (cells: readonly string[]) =>
    `| ${headers.map((_, i) => cell(cells[i] ?? '')).join(' | ')} |`;
  const rule = `| ${aligns.map((a) => (a === 'right' ? '---:' : ':---')).join(' | ')} |`;
  return [line(headers), rule, ...rows.map(line)].join('\n');
}
