import { readFileSync } from 'node:fs';
import type { AdminToken } from '@fleetcron/admin';
import { UsageError } from './args.js';

/**
 * Reads `fleetcron serve --tokens-file FILE`: one token a line, `<name> <read|write> <token>`,
 * blank lines and `#` comments ignored. Each operator or team gets its own name, recorded as
 * who paused or ran a job (`admin:<name>`). The file keeps the tokens out of `ps` and the
 * shell history; the admin handler checks the names and lengths (a typed error naming the line's
 * entry).
 */
export function readTokensFile(path: string): AdminToken[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `--tokens-file ${JSON.stringify(path)} cannot be read: ${(error as Error).message}`,
    );
  }
  const tokens: AdminToken[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const parts = line.split(/\s+/);
    const [name, role, token] = parts;
    if (parts.length !== 3 || (role !== 'read' && role !== 'write')) {
      throw new UsageError(
        `--tokens-file line ${i + 1}: expected "<name> <read|write> <token>", e.g. "alice write $(openssl rand -hex 24)"`,
      );
    }
    tokens.push({ name: name as string, role, token: token as string });
  }
  return tokens;
}
