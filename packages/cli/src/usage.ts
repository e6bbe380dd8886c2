/** The usage text printed by `fleetcron --help` and after bad arguments. */
export const USAGE = `Usage: fleetcron <command> [options]

Schedules
  next "<expr>" [--tz ZONE] [--dialect D] [-n COUNT] [--after ISO] [--json]
                          next fires in UTC and in ZONE (default UTC), with DST notes
  validate "<expr>" [--tz ZONE] [--dialect D] [--json]
                          exit 0 when the expression (and zone) are valid, 1 with the reason
  --dialect quartz|unix   how weekday numbers read: quartz 1-7 = SUN-SAT (and a 7th
                          field, the year), unix 0-7 with 0 and 7 = SUN; required when
                          an expression has ? and numeric weekdays

Fleet (backend: --postgres URL | --redis URL | --etcd URL | --sqlite FILE, or FLEETCRON_URL)
  instances               live instances
  jobs                    jobs fleet-wide: trigger, next fire, paused, last outcome, drift
  next --job <job> [-n COUNT] [--after ISO]
                          a job's next fires in its zone, excluded ones marked with the reason
  history <job> [--status S[,S]] [--limit N] [--cursor C]
                          a job's runs, newest first
  pause <job> | resume <job> [--note TEXT]
                          pause or resume a job on every instance (the note, why,
                          is kept in the audit log)
  run <job> [--note TEXT] [--data JSON] [--wait [--timeout MS]]
                          ask the fleet to run a job once now (the run sees
                          ctx.request.data); --wait waits for the run and prints its
                          outcome (exit 0 succeeded, 6 failed, 7 skipped, 8 not ended
                          within --timeout, default 300000 ms)
  audit [--job J] [--action A] [--limit N] [--cursor C]
                          who paused, resumed, ran or changed what, when and why
                          (the store's audit log), newest first
  request <id>            where a run request is: pending, taken by which instance
                          until when, or decided as which fire (and that run's outcome)
  schedules list [--handler H] [--limit N] [--cursor C]
  schedules get <id>
  schedules create --handler H (--cron EXPR [--tz Z] | --every MS | --at ISO)
                   [--id ID] [--data JSON] [--options JSON] [--enabled false]
  schedules update <id> --expected-version N [--handler H] [trigger] [--data JSON]
                   [--options JSON] [--enabled true|false]
  schedules enable|disable|remove <id> [--expected-version N]
                          stored schedules (every store): every change versioned,
                          recorded with --by (and --note, why, in the audit log);
                          a stale --expected-version exits 5
  serve [--port P] [--host H] [--tokens-file F] [--token T] [--read-token T]
        [--base-path /admin] [--allowed-hosts a,b] [--public-origin URL] [--grace MS]
                          the admin console and HTTP API (token also from FLEETCRON_TOKEN;
                          F: lines "<name> <read|write> <token>"; answers only localhost,
                          IP addresses, --host and --allowed-hosts names; stops within
                          --grace ms, default 5000)

Backend options
  --schema NAME           PostgreSQL schema of the store (default public)
  --prefix NAME           Redis / etcd key prefix of the store (default fleetcron)
  --sqlite FILE           the fleet's SQLite file (a path, or sqlite:///abs/path.db;
                          sqlite:rel/path.db is relative to the current directory)
  --by NAME               who asks, recorded with pause/resume/run and schedule changes
                          (default cli:<user>@<host>)
  --note TEXT             why (at most 1,000 characters), kept with the change in the
                          store's audit log (fleetcron audit)

Output
  --json                  machine-readable JSON on stdout
  -h, --help              this text
  -V, --version           the version of @fleetcron/cli

Exit codes: 0 ok, 1 invalid input (expression, zone, value) or unexpected error,
2 bad arguments, 3 backend unreachable, 4 unknown job, schedule or run request,
5 schedule changed since --expected-version; run --wait: 6 the run failed (or timed
out, lost its lease, was aborted), 7 the run was skipped (paused, or busy),
8 --timeout passed before the run ended.`;
