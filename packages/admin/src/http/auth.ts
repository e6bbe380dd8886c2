import { createHash, timingSafeEqual } from 'node:crypto';
import { InvalidOptionError } from '@fleetcron/core';

/** What a caller may do: `read` sees the fleet, `write` also pauses, resumes and runs jobs. */
export type AdminRole = 'read' | 'write';

/** A caller that passed authentication: its role and the name recorded with its mutations. */
export interface AdminPrincipal {
  role: AdminRole;
  /** Who asked, as history and `pausedBy` record it, e.g. `alice` or `token:ops`. */
  name: string;
}

/** A bearer token and what it allows. */
export interface AdminToken {
  /** The secret the client sends as `Authorization: Bearer <token>`. */
  token: string;
  /** Default `write`. */
  role?: AdminRole;
  /**
   * Who holds it, recorded as who asked (`admin:<name>`) and shown to `onAction`: give each
   * operator or team its own token and name. 1–64 characters, no control or bidi characters,
   * unique among the tokens. Default `token` for the `token` shorthand, `token-<n>` for
   * `tokens[n-1]`.
   */
  name?: string;
}

/**
 * A custom check: return a role (or a role with a name), or `false` to refuse (401). Use it
 * for sessions, SSO headers set by a proxy, mTLS; it sees the original request.
 */
export type AuthorizeHook = (
  request: Request,
) => AdminRole | AdminPrincipal | false | Promise<AdminRole | AdminPrincipal | false>;

/** Authentication options of the admin handler; at least one must be set. */
export interface AdminAuthOptions {
  /** One write token (shorthand for `tokens: [{ token, role: 'write' }]`). */
  token?: string;
  /** Tokens with roles and names. */
  tokens?: readonly AdminToken[];
  /** Custom check, asked when the request carries no known bearer token. */
  authorize?: AuthorizeHook;
}

/** Decides who a request comes from: a principal, or `null` for 401. */
export type Authenticator = (request: Request) => Promise<AdminPrincipal | null>;

const MIN_TOKEN_LENGTH = 16;
/** Longest principal name (token name or `authorize` answer), characters. */
export const MAX_PRINCIPAL_NAME_LENGTH = 64;
/** Control, format (bidi marks among them), unassigned and private-use characters. */
const UNSAFE_NAME_CHARACTER = /\p{C}/u;

/** Why `name` cannot name a principal, or `null` when it can. */
function nameProblem(name: unknown): string | null {
  if (typeof name !== 'string' || name.trim() === '') return 'must be a non-empty string';
  if (name.length > MAX_PRINCIPAL_NAME_LENGTH)
    return `must be at most ${MAX_PRINCIPAL_NAME_LENGTH} characters, got ${name.length}`;
  if (UNSAFE_NAME_CHARACTER.test(name))
    return 'must not contain control, format (bidi) or unassigned characters';
  return null;
}

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

function checkToken(
  entry: AdminToken,
  index: number,
  defaultName: string,
): { digest: Buffer; principal: AdminPrincipal } {
  const field = `tokens[${index}]`;
  if (typeof entry?.token !== 'string' || entry.token.length < MIN_TOKEN_LENGTH) {
    throw new InvalidOptionError(
      `${field}.token`,
      `must be a string of at least ${MIN_TOKEN_LENGTH} characters (e.g. \`openssl rand -hex 24\`).`,
    );
  }
  const role = entry.role ?? 'write';
  if (role !== 'read' && role !== 'write') {
    throw new InvalidOptionError(
      `${field}.role`,
      `must be 'read' or 'write', got ${String(role)}.`,
    );
  }
  const name = entry.name ?? defaultName;
  const problem = nameProblem(name);
  if (problem) throw new InvalidOptionError(`${field}.name`, `${problem}.`);
  return { digest: digest(entry.token), principal: { role, name } };
}

function normalize(result: AdminRole | AdminPrincipal | false): AdminPrincipal | null {
  if (result === 'read' || result === 'write') return { role: result, name: 'authorize' };
  if (result && (result.role === 'read' || result.role === 'write')) {
    const name = String(result.name || 'authorize');
    const problem = nameProblem(name);
    if (problem) {
      throw new InvalidOptionError('authorize', `returned a principal name that ${problem}.`);
    }
    return { role: result.role, name };
  }
  return null;
}

/**
 * Builds the authenticator. Throws `InvalidOptionError` (field `token`) when neither a token nor
 * `authorize` is given: there is no anonymous access by default. Tokens are compared as SHA-256
 * digests in constant time.
 */
export function createAuthenticator(options: AdminAuthOptions): Authenticator {
  const entries: AdminToken[] = [...(options.tokens ?? [])];
  const shorthand = options.token !== undefined;
  if (shorthand) entries.unshift({ token: options.token as string, role: 'write' });
  const known = entries.map((entry, i) =>
    checkToken(entry, i, shorthand && i === 0 ? 'token' : `token-${shorthand ? i : i + 1}`),
  );
  const seen = new Set<string>();
  for (const [i, entry] of known.entries()) {
    if (seen.has(entry.principal.name)) {
      throw new InvalidOptionError(
        `tokens[${i}].name`,
        `${JSON.stringify(entry.principal.name)} names two tokens; give each token its own name so the audit tells their holders apart.`,
      );
    }
    seen.add(entry.principal.name);
  }
  const authorize = options.authorize;
  if (authorize !== undefined && typeof authorize !== 'function') {
    throw new InvalidOptionError('authorize', 'must be a function (request) => role | false.');
  }
  if (known.length === 0 && authorize === undefined) {
    throw new InvalidOptionError(
      'token',
      'no way to authenticate: set `token`, `tokens` or `authorize`. Anonymous access is off by default; on a trusted network pass `authorize: () => "read"` (or "write") explicitly.',
    );
  }
  return async (request) => {
    const header = request.headers.get('authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (match) {
      const sent = digest(match[1] as string);
      // Compare against every token so the time taken does not say which one matched.
      let found: AdminPrincipal | null = null;
      for (const entry of known) {
        if (timingSafeEqual(sent, entry.digest) && found === null) found = entry.principal;
      }
      if (found) return found;
    }
    if (authorize === undefined) return null;
    return normalize(await authorize(request));
  };
}
