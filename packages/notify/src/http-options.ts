import { InvalidOptionError } from '@fleetcron/core';
import { assertNonEmptyString, assertPositiveMs } from '@fleetcron/core/backend';
import type { AlertLink } from './alert-text.js';

/** Default bound of one HTTP request of a notifier, ms. */
export const DEFAULT_HTTP_TIMEOUT_MS = 10_000;

/** Options every HTTP notifier takes. */
export interface HttpNotifierOptions {
  /** Where to POST: an `http:` or `https:` URL. */
  url: string | URL;
  /** Name in events and logs. Defaults per notifier (`webhook`, `slack`). */
  name?: string;
  /** Bound of one request, ms (besides the delivery's own `timeoutMs`). Default 10000. */
  timeoutMs?: number;
  /** Extra request headers (an `Authorization` token, ...). */
  headers?: Record<string, string>;
  /** A link to put in the message, e.g. to the console: `(alert) => \`https://ops/fleet#/alerts/${alert.id}\``. */
  link?: AlertLink;
}

/** The validated common options. */
export interface ParsedHttpOptions {
  url: URL;
  name: string;
  timeoutMs: number;
  headers: Record<string, string>;
  link: AlertLink | undefined;
}

/**
 * Validates the common options of an HTTP notifier (fields `${kind}.url`, `.name`, `.timeoutMs`,
 * `.headers`, `.link`).
 */
export function parseHttpOptions(kind: string, options: HttpNotifierOptions): ParsedHttpOptions {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError(kind, `pass options, e.g. { url: 'https://example.com/hook' }.`);
  }
  let url: URL;
  try {
    url = new URL(String(options.url));
  } catch (cause) {
    throw new InvalidOptionError(
      `${kind}.url`,
      'must be an absolute http: or https: URL, e.g. https://example.com/hook.',
      { cause },
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidOptionError(
      `${kind}.url`,
      `must be an http: or https: URL, got ${url.protocol}.`,
    );
  }
  const name = options.name ?? kind;
  assertNonEmptyString(`${kind}.name`, name);
  const timeoutMs = options.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  assertPositiveMs(`${kind}.timeoutMs`, timeoutMs);
  const headers = options.headers ?? {};
  if (
    typeof headers !== 'object' ||
    headers === null ||
    Object.values(headers).some((v) => typeof v !== 'string')
  ) {
    throw new InvalidOptionError(`${kind}.headers`, 'must be an object of string values.');
  }
  if (options.link !== undefined && typeof options.link !== 'function') {
    throw new InvalidOptionError(
      `${kind}.link`,
      'must be a function (alert) => string | undefined.',
    );
  }
  return { url, name, timeoutMs, headers: { ...headers }, link: options.link };
}
