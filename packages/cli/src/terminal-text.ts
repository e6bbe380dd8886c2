/**
 * Characters that must not reach a terminal raw: C0 controls but newline and tab (ESC starts
 * the sequences that retitle a window, move the cursor, rewrite the screen or, with OSC 52, the
 * clipboard; CR overwrites a line), DEL, C1 controls (U+0080–U+009F: 8-bit CSI and OSC), and the
 * bidirectional-text controls that make a name show as something else
 * (`invoice-\u202Eexe.fdp` shows as "invoice-pdf.exe").
 */
const UNSAFE = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;

/**
 * Makes text from the fleet (job names, error messages, who paused a job, notes) safe to print:
 * each unsafe character becomes its visible escape `\u001b`, so `\x1b]0;pwned\x07` prints as the
 * inert text `\u001b]0;pwned\u0007` and a terminal sees no control sequence at all. Newlines and
 * tabs are kept. The same rule keeps JSON output valid and equal in value: inside a JSON string
 * `\u009b` is that character's escape.
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) =>
    c === '\n' || c === '\t'
      ? c
      : `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, '0')}`,
  );
}
