/**
 * Escapes a string so it can sit inside a Redis Cluster hash tag: `%`, `{` and `}` become
 * `%25`, `%7B`, `%7D`, and a lone UTF-16 surrogate (which would not survive UTF-8 encoding)
 * becomes `%uXXXX`. Everything else stays readable. The mapping is injective (every escape
 * starts with `%`, and `%` itself is escaped), so two job names never share keys.
 */
export function encodeKeyPart(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x25) out += '%25';
    else if (code === 0x7b) out += '%7B';
    else if (code === 0x7d) out += '%7D';
    else if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        out += text.slice(i, i + 2);
        i++;
      } else {
        out += `%u${code.toString(16).toUpperCase()}`;
      }
    } else out += text[i];
  }
  return out;
}
