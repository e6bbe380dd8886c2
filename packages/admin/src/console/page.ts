import { createHash } from 'node:crypto';
import { consoleAudit } from './audit-view.js';
import { consoleMain } from './client.js';
import { consoleConfirm } from './confirm.js';
import { consoleDom } from './dom.js';
import { consoleRunRequests } from './run-request-panel.js';
import { consoleScheduleCells } from './schedule-cells.js';
import { consoleScheduleForm } from './schedule-form.js';
import { consoleSchedules } from './schedules-view.js';
import { CONSOLE_CSS } from './styles.js';
import { consoleViews } from './views.js';

/** One static file of the console, with its content type and a strong ETag. */
export interface ConsoleAsset {
  body: string;
  contentType: string;
  etag: string;
}

function asset(body: string, contentType: string): ConsoleAsset {
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 22);
  return { body, contentType, etag: `"${hash}"` };
}

/**
 * The browser script: {@link consoleMain} called with the rendering helpers, the confirmation
 * dialog, the views, the schedules pages with their form and cells, the run-request panel and the audit page, each compiled function inserted
 * through `toString()`. Some transpilers (tsx, esbuild with
 * `keepNames`) wrap functions in a `__name(fn, "name")` helper that lives outside the function;
 * the one-line stand-in keeps the script working whichever built it.
 */
export const CONSOLE_SCRIPT = asset(
  [
    '"use strict";',
    'var __name = function (target) { return target; };',
    `(${consoleMain.toString()})(`,
    `  (${consoleDom.toString()})(),`,
    `  ${consoleConfirm.toString()},`,
    `  ${consoleViews.toString()},`,
    `  ${consoleSchedules.toString()},`,
    `  ${consoleScheduleForm.toString()},`,
    `  ${consoleScheduleCells.toString()},`,
    `  ${consoleRunRequests.toString()},`,
    `  ${consoleAudit.toString()},`,
    ');',
    '',
  ].join('\n'),
  'text/javascript; charset=utf-8',
);

/** The stylesheet. */
export const CONSOLE_STYLES = asset(CONSOLE_CSS, 'text/css; charset=utf-8');

const escapeAttr = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The HTML shell: no data, no inline script or style. The base path and the refresh interval
 * reach the script as `data-` attributes of `<body>`; everything else comes from the JSON API,
 * which requires authentication.
 */
export function consolePage(options: { base: string; title: string; refreshMs: number }): string {
  const base = escapeAttr(options.base);
  const title = escapeAttr(options.title);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${base}/assets/console.css?v=${CONSOLE_STYLES.etag.slice(1, 9)}">
<script src="${base}/assets/console.js?v=${CONSOLE_SCRIPT.etag.slice(1, 9)}" defer></script>
</head>
<body data-base="${base}" data-refresh-ms="${options.refreshMs}">
<header><span class="brand">fleetcron</span><span class="muted">${title}</span></header>
<div id="app"><noscript>The fleetcron console needs JavaScript; the JSON API is at ${base}/api/fleet.</noscript></div>
</body>
</html>
`;
}
