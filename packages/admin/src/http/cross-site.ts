/** The header every mutation must carry; a cross-site HTML form cannot set it. */
export const MUTATION_HEADER = 'x-fleetcron-request';

/**
 * Why a mutation request is refused as possibly cross-site, or `null` when it is fine. A
 * mutation must be a non-simple request (JSON body and the custom header), so a browser sends
 * it only from the console's own origin: a cross-site form or `fetch` in `no-cors` mode cannot
 * add the header or the content type, and the handler answers no CORS preflight. The `Origin`
 * and `Sec-Fetch-Site` headers, when a browser sends them, must also name this origin: the
 * request's own host (already checked against the allowed hosts) or `publicOrigin`, the origin
 * browsers use when a proxy in front rewrites `Host`.
 */
export function crossSiteProblem(
  request: Request,
  url: URL,
  publicOrigin: URL | null = null,
): string | null {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    return 'mutations need a JSON body (Content-Type: application/json)';
  }
  if (request.headers.get(MUTATION_HEADER) === null) {
    return `mutations need the ${MUTATION_HEADER} header`;
  }
  const site = request.headers.get('sec-fetch-site');
  if (site !== null && site !== 'same-origin' && site !== 'none') {
    return `cross-site request refused (Sec-Fetch-Site: ${site})`;
  }
  const origin = request.headers.get('origin');
  if (origin !== null && hostOf(origin) !== url.host && origin !== publicOrigin?.origin) {
    return `cross-origin request refused (Origin: ${origin})`;
  }
  return null;
}

/** The host of an Origin header value (`null` and garbage give an empty string). */
function hostOf(origin: string): string {
  try {
    return new URL(origin).host;
  } catch {
    return '';
  }
}
