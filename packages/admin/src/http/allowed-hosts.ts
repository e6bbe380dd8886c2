import { isIP } from 'node:net';
import { InvalidOptionError } from '@fleetcron/core';

/**
 * Which `Host` names the handler answers: a list of names (`ops.example.com`; a leading dot,
 * `.example.com`, also allows every subdomain), or `'any'` to answer every name (only behind a
 * proxy that checks `Host` itself).
 */
export type AllowedHosts = readonly string[] | 'any';

/** Decides whether a request's host name (from its URL, i.e. the `Host` header) is allowed. */
export type HostCheck = (hostname: string) => boolean;

/** Names always allowed: they resolve to this machine only, so no other site can rebind them. */
const LOOPBACK_NAMES = ['localhost'];

const HOST_NAME = /^\.?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/i;

/** A URL hostname without IPv6 brackets or a trailing dot, lower-case. */
function bare(hostname: string): string {
  return hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
}

/** `true` for `localhost`, `*.localhost` and every IP literal (a rebinding needs a name). */
export function isAlwaysAllowed(hostname: string): boolean {
  const name = bare(hostname);
  return isIP(name) !== 0 || LOOPBACK_NAMES.includes(name) || name.endsWith('.localhost');
}

/**
 * Builds the host check from `allowedHosts` (and the host of `publicOrigin`, always allowed).
 * Loopback names and IP literals are always allowed: a DNS-rebinding page reaches the handler
 * under the attacker's own name, never under an IP literal or `localhost`.
 *
 * @throws InvalidOptionError (field `allowedHosts`) for anything but host names or `'any'`.
 */
export function createHostCheck(allowed: unknown, publicHost: string | null): HostCheck {
  if (allowed === 'any') return () => true;
  if (allowed !== undefined && !Array.isArray(allowed)) {
    throw new InvalidOptionError(
      'allowedHosts',
      `must be an array of host names such as ['ops.example.com'] or 'any', got ${JSON.stringify(allowed)}.`,
    );
  }
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const [i, entry] of ((allowed ?? []) as unknown[]).entries()) {
    if (typeof entry !== 'string' || !HOST_NAME.test(bare(entry)) || bare(entry).length > 253) {
      throw new InvalidOptionError(
        `allowedHosts[${i}]`,
        `must be a host name without scheme or port, such as "ops.example.com" or ".example.com" (every subdomain), got ${JSON.stringify(entry)}.`,
      );
    }
    const name = bare(entry);
    if (name.startsWith('.')) suffixes.push(name);
    else exact.add(name);
  }
  if (publicHost !== null) exact.add(bare(publicHost));
  return (hostname) => {
    const name = bare(hostname);
    if (isAlwaysAllowed(name) || exact.has(name)) return true;
    return suffixes.some((suffix) => name.endsWith(suffix) || name === suffix.slice(1));
  };
}

/**
 * Reads `publicOrigin` (the origin browsers use when a proxy in front rewrites `Host`), e.g.
 * `https://ops.example.com`; `null` when not set.
 *
 * @throws InvalidOptionError (field `publicOrigin`) unless it is an http(s) origin without a path.
 */
export function parsePublicOrigin(value: unknown): URL | null {
  if (value === undefined) return null;
  let url: URL | null = null;
  try {
    url = typeof value === 'string' ? new URL(value) : null;
  } catch {
    url = null;
  }
  if (
    url === null ||
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.pathname !== '/' ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== ''
  ) {
    throw new InvalidOptionError(
      'publicOrigin',
      `must be an origin such as "https://ops.example.com" (scheme, host, optional port; no path), got ${JSON.stringify(value)}.`,
    );
  }
  return url;
}
