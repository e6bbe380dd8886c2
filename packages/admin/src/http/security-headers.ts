/**
 * The Content-Security-Policy of the console: only the handler's own script, stylesheet and
 * API; no inline script or style, no plugins, no framing, no form posts anywhere, no base-URI
 * tricks. The page therefore loads nothing from outside the handler.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
