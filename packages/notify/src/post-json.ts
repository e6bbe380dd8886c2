import { NotifyFailedError, NotifyTimeoutError } from '@fleetcron/core';

/** User agent of every request the notifiers send. */
export const USER_AGENT = 'fleetcron-notify/0.1';

/** True for HTTP statuses worth another attempt: 408, 429 and 5xx. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * POSTs `body` as JSON and resolves on a 2xx answer. Rejects with `NotifyFailedError` (a network
 * failure or 408/429/5xx: retryable; another status: not retryable) or with the reason of the
 * signal (the delivery's timeout or stop, or this request's own `timeoutMs`). The URL's path and
 * query never appear in an error: incoming-webhook URLs carry their secret there.
 */
export async function postJson(
  notifier: string,
  url: URL,
  body: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<void> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new NotifyTimeoutError(notifier, timeoutMs)),
    timeoutMs,
  );
  const onAbort = () => controller.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  try {
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...headers },
        signal: controller.signal,
        redirect: 'error',
      });
    } catch (error) {
      if (controller.signal.aborted) throw controller.signal.reason;
      const reason = error instanceof Error ? (error.cause ?? error) : error;
      throw new NotifyFailedError(
        notifier,
        `POST to ${url.origin} failed: ${reason instanceof Error ? reason.message : String(reason)}`,
        { retryable: true, cause: error },
      );
    }
    const text = await response.text().catch(() => '');
    if (response.ok) return;
    throw new NotifyFailedError(
      notifier,
      `${url.origin} answered HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
      { retryable: retryableStatus(response.status), status: response.status },
    );
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}
