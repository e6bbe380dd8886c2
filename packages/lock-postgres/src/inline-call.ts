/**
 * Function calls with their arguments written into the statement, sent as one simple-protocol
 * query (one `Query` message, no `Parse`/`Bind`/`Describe`/`Execute`/`Sync`): the cheapest round
 * trip for a statement that is not prepared, on the server and in `pg`. Used for the claim and
 * release calls when `preparedStatements` is off (see the README, "Where a claim's time goes").
 */

/** An argument of an inline call: text, an integer, a boolean or NULL. */
export type InlineArgument = string | number | boolean | null;

/**
 * A string as a SQL literal, safe whatever `standard_conforming_strings` is: quotes doubled, and
 * when it holds a backslash, an `E''` literal with backslashes doubled (as `pg`'s
 * `escapeLiteral`). The string must not hold U+0000 (callers pass `encodeText` output).
 */
export function sqlLiteral(text: string): string {
  let body = '';
  let backslash = false;
  for (const char of text) {
    if (char === "'") body += "''";
    else if (char === '\\') {
      body += '\\\\';
      backslash = true;
    } else body += char;
  }
  return backslash ? ` E'${body}'` : `'${body}'`;
}

/** One argument as SQL; numbers must be safe integers (a `TypeError` otherwise: a caller bug). */
function argument(value: InlineArgument): string {
  if (value === null) return 'NULL';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new TypeError(`not an integer: ${value}`);
    return String(value);
  }
  return sqlLiteral(value);
}

/** `SELECT * FROM <fn>(<args>)` with the arguments inline; `fn` is a quoted, trusted name. */
export function inlineCall(fn: string, args: readonly InlineArgument[]): string {
  return `SELECT * FROM ${fn}(${args.map(argument).join(', ')})`;
}
