import { alertId, alertKey, type Execution } from '@fleetcron/core';
import { type ReceivedMail, startSmtpReceiver } from '@fleetcron/testkit';
import { expect } from 'vitest';
import type { FleetScenario } from '../types.js';
import { pollUntil } from '../util.js';
import type { ChildJob, ChildWatchdog } from './child-config.js';
import type { InstanceChild } from './child-process.js';
import { allExecutions, withControlSetup } from './control-harness.js';
import { FAILING_JOB, INSTANCES, startFleet, WATCHDOG_JOB } from './watchdog-scenarios.js';

/** The recipient every child's `emailNotifier` sends to. */
const RECIPIENT = 'ops@fleetcron.test';

/** One `run_failed` e-mail the SMTP server accepted. */
interface Mailed {
  /** The alert id (`X-Fleetcron-Alert`). */
  readonly id: string;
  /** The envelope sender: `<instanceId>@fleetcron.test`. */
  readonly from: string;
  readonly to: readonly string[];
  readonly subject: string;
}

/** The `run_failed` alerts among `mails` (the body's `kind:` line says the kind). */
function runFailedMails(mails: readonly ReceivedMail[]): Mailed[] {
  return mails.flatMap((mail) =>
    /^kind: +run_failed$/m.test(mail.text)
      ? [
          {
            id: mail.headers['x-fleetcron-alert'] ?? '',
            from: mail.from,
            to: mail.to,
            subject: mail.subject,
          },
        ]
      : [],
  );
}

/** The alert id the watchdog gives the failure `row` (from the facts, whichever run sends it). */
function failureId(row: Execution): string {
  return alertId(alertKey('run_failed', row.job, row.fireAt), row.finishedAt ?? 0);
}

/**
 * The fleet watchdog delivering e-mail across real processes (issue #30): 4 child processes each
 * run a job that fails every 2 s and `fleetWatchdog` (every 2 s, settle 500 ms) notifying through
 * `emailNotifier` (nodemailer) the testkit's real SMTP server process. Judged from the store's
 * history and the messages the SMTP server accepted: every failed run that ended before the last
 * successful watchdog run's span is in one e-mail (`X-Fleetcron-Alert` = its alert id, to the
 * configured recipient, from one of the fleet's instances), every e-mail is of a failed run in
 * the store, and no alert is mailed twice unless a watchdog run ended other than `succeeded`
 * (whose span the next run judges again and sends again: at least once).
 */
export const watchdogEmailsOnce: FleetScenario = {
  title:
    'fleet watchdog e-mails through a real SMTP server, 4 processes, a job failing every 2 s: each failure in one e-mail',
  timeoutMs: 90_000,
  run: (options) =>
    withControlSetup(options, async (setup) => {
      const { scale, tag, store } = setup;
      const smtp = await startSmtpReceiver();
      const ids = Array.from({ length: INSTANCES }, (_, i) => `mail${i + 1}-${tag}`);
      const url = `smtp://${smtp.host}:${smtp.port}`;
      const watchdog: ChildWatchdog = { url, everyMs: 2000, settleMs: 500 };
      const failing: ChildJob = { name: FAILING_JOB, everyMs: 2000, fails: true };
      let children: InstanceChild[] = [];
      try {
        children = await startFleet(setup, ids, [failing], watchdog);
        await pollUntil(() => new Set(runFailedMails(smtp.mails).map((m) => m.id)).size >= 3, {
          timeoutMs: 30_000 * scale,
          message: 'three failures to be e-mailed',
        });
      } finally {
        await Promise.all(children.map((c) => c.stop(20_000 * scale)));
        await Promise.all(children.map((c) => c.kill()));
        await smtp.close();
      }

      // the span judged by the last successful watchdog run ended settleMs before its fire
      const watchdogRuns = await allExecutions(store, WATCHDOG_JOB);
      const lastJudged = Math.max(
        ...watchdogRuns.filter((r) => r.status === 'succeeded').map((r) => r.fireAt),
      );
      const judgedTo = lastJudged - watchdog.settleMs;
      const failedRows = (await allExecutions(store, FAILING_JOB)).filter(
        (r) => r.status === 'failed',
      );
      const judged = failedRows.filter((r) => r.finishedAt !== null && r.finishedAt <= judgedTo);
      const mailed = runFailedMails(smtp.mails);
      const describe = mailed.map((m) => `${m.id} from ${m.from}: ${m.subject}`).join('\n');
      const count = new Map<string, number>();
      for (const m of mailed) count.set(m.id, (count.get(m.id) ?? 0) + 1);

      expect(judged.length, 'failures judged').toBeGreaterThanOrEqual(3);
      for (const row of judged) {
        expect(
          count.get(failureId(row)) ?? 0,
          `failure of fire ${new Date(row.fireAt).toISOString()} e-mailed:\n${describe}`,
        ).toBeGreaterThanOrEqual(1);
      }
      const known = new Set(failedRows.map(failureId));
      const senders = new Set(ids.map((id) => `${id}@fleetcron.test`));
      for (const m of mailed) {
        expect(known.has(m.id), `${m.id} is a failed run in the store:\n${describe}`).toBe(true);
        expect(senders.has(m.from), `${m.from} is an instance of the fleet`).toBe(true);
        expect(m.to).toEqual([RECIPIENT]);
        expect(m.subject).toContain(FAILING_JOB);
      }
      // at least once: a watchdog run that did not succeed (delivery failed, lease lost under
      // load) has its span judged again, so its alerts may be mailed twice; otherwise once
      const unfinished = watchdogRuns.filter(
        (r) => r.status !== 'succeeded' && r.fireAt <= lastJudged,
      );
      const twice = [...count].filter(([, n]) => n > 1).map(([id]) => id);
      if (unfinished.length === 0) {
        expect(twice, `alerts e-mailed more than once:\n${describe}`).toEqual([]);
      } else {
        const runs = unfinished.map((r) => `${r.status} at ${r.fireAt}`).join(', ');
        expect(twice.length, `e-mailed twice (${runs}):\n${describe}`).toBeLessThan(count.size);
      }
    }),
};
