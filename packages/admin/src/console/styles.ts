/**
 * The console's stylesheet, served as `assets/console.css`. System fonts only (nothing loaded
 * from the web); light and dark schemes; tables become labelled cards on narrow screens. Long
 * text (a 512-character job name, a 10 kB error line) wraps anywhere instead of widening the
 * page; stored text is bidi-isolated.
 */
export const CONSOLE_CSS = `
:root { color-scheme: light dark; --bg: #fff; --fg: #1b1f24; --muted: #59636e; --line: #d1d9e0;
  --accent: #0b5cd5; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --chip: #eff2f5; }
@media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1;
  --line: #3d444d; --accent: #4493f8; --ok: #3fb950; --bad: #f85149; --warn: #d29922; --chip: #212830; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  overflow-wrap: anywhere; }
bdi, code, pre, summary { unicode-bidi: isolate; }
header { display: flex; align-items: center; gap: .75rem; padding: .6rem 1rem; border-bottom: 1px solid var(--line); }
header .brand { font-weight: 700; letter-spacing: .02em; }
#app { padding: .5rem 1rem 2rem; max-width: 80rem; margin: 0 auto; }
nav { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem; padding: .5rem 0; }
nav a[aria-current="page"] { font-weight: 700; text-decoration: underline; }
.spacer { flex: 1; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, select:focus-visible, input:focus-visible, summary:focus-visible {
  outline: 3px solid var(--accent); outline-offset: 2px; }
h1 { font-size: 1.4rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
pre { white-space: pre-wrap; word-break: break-word; background: var(--chip); padding: .5rem; border-radius: 4px; }
.table { width: 100%; border-collapse: collapse; }
.table th, .table td { text-align: left; padding: .45rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
.table th { font-size: .8rem; text-transform: uppercase; color: var(--muted); }
time { display: inline-flex; flex-direction: column; }
time .abs { font-size: .8rem; color: var(--muted); }
.badge { display: inline-block; padding: .05rem .45rem; border-radius: 999px; font-size: .8rem;
  border: 1px solid currentColor; margin-right: .25rem; white-space: nowrap; }
.badge-succeeded, .badge-active { color: var(--ok); }
.badge-failed, .badge-timed_out, .badge-lease_lost, .badge-aborted { color: var(--bad); }
.badge-paused, .badge-skipped, .badge-drift { color: var(--warn); }
.badge-running { color: var(--accent); }
.badge-none { color: var(--muted); }
.muted { color: var(--muted); }
.skip-note { display: block; font-size: .8rem; color: var(--warn); }
.excluded-note { display: block; font-size: .8rem; color: var(--warn); }
.fires li.excluded > code { text-decoration: line-through; }
.fires li.excluded .excluded-note { display: inline; margin-left: .5rem; }
.warning { border-left: 4px solid var(--warn); padding: .4rem .75rem; background: var(--chip); }
.error-text { color: var(--bad); }
.status { font-size: .8rem; color: var(--muted); margin: 0; }
.notice:empty { display: none; }
.notice { padding: .4rem .75rem; margin: .5rem 0; border-radius: 4px; background: var(--chip); }
.notice-error { color: var(--bad); }
.notice-ok { color: var(--ok); }
.run-request { padding: .4rem .75rem; margin: .5rem 0; border-radius: 4px; border: 1px solid var(--chip); }
.run-request p { margin: .2rem 0; }
tr.requested-run { outline: 2px solid var(--ok); }
#confirm-data { font-family: monospace; width: 100%; }
.actions { display: flex; gap: .4rem; flex-wrap: wrap; }
button { font: inherit; padding: .3rem .75rem; border-radius: 6px; border: 1px solid var(--line);
  background: var(--chip); color: var(--fg); cursor: pointer; min-height: 2.25rem; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button:disabled { opacity: .5; cursor: not-allowed; }
button.link { border: none; background: none; color: var(--accent); padding: 0; min-height: 0; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; }
.fires { padding-left: 1.25rem; }
.toolbar { margin: .5rem 0; }
select, input { font: inherit; padding: .3rem .5rem; border: 1px solid var(--line); border-radius: 6px;
  background: var(--bg); color: var(--fg); }
a.button { display: inline-flex; align-items: center; padding: .3rem .75rem; border-radius: 6px;
  border: 1px solid var(--line); background: var(--chip); color: var(--fg); text-decoration: none; min-height: 2.25rem; }
a.button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
.schedule-form { display: grid; gap: .75rem; max-width: 40rem; }
.schedule-form fieldset { display: grid; gap: .75rem; border: 1px solid var(--line); border-radius: 8px; padding: .5rem .75rem .75rem; }
.field { display: grid; gap: .2rem; }
.field[hidden] { display: none; }
.field label { font-weight: 600; font-size: .9rem; }
.field textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em;
  padding: .3rem .5rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
.field .hint { font-size: .8rem; color: var(--muted); }
.field-error { font-size: .85rem; color: var(--bad); }
.field-error:empty { display: none; }
.field.invalid input, .field.invalid select, .field.invalid textarea { border-color: var(--bad); }
.form-error { color: var(--bad); margin: 0; }
.field input[type="checkbox"] { justify-self: start; width: 1.2rem; height: 1.2rem; }
#schedules th, #audit th { overflow-wrap: normal; white-space: nowrap; }
.audit-note { white-space: pre-wrap; }
.last-change .by { display: block; font-size: .8rem; }
.form-error:empty { display: none; }
.login { display: grid; gap: .5rem; max-width: 22rem; margin: 3rem auto; }
dialog.confirm { border: 1px solid var(--line); border-radius: 8px; background: var(--bg); color: var(--fg);
  max-width: min(30rem, 92vw); }
dialog.confirm h2 { margin-top: 0; font-size: 1rem; }
dialog.confirm label { display: block; font-size: .85rem; color: var(--muted); }
dialog.confirm textarea { display: block; width: 100%; margin: .25rem 0 .75rem; font: inherit;
  padding: .3rem .5rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
.dialog-buttons { display: flex; justify-content: flex-end; gap: .5rem; }
@media (max-width: 720px) {
  .table thead { display: none; }
  .table tr { display: block; border: 1px solid var(--line); border-radius: 8px; margin-bottom: .75rem; padding: .25rem .5rem; }
  .table td { display: grid; grid-template-columns: 7.5rem 1fr; border: none; padding: .3rem 0; }
  .table td::before { content: attr(data-label); color: var(--muted); font-size: .8rem; }
}
`;
