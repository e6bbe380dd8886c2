// The fleet watchdog delivering by e-mail to the testkit's real SMTP server, across real
// processes, on the memory lock (see `fleetControlScenarios` for why not on every lock). The
// scenario holds its own assertions.
import { describe, it } from 'vitest';
import { watchdogEmailsOnce } from '../src/fleet/watchdog-email-scenario.js';
import { memoryLockFixture } from './memory-fixture.js';

describe('fleet watchdog by e-mail (memory lock, real processes, real SMTP server)', () => {
  it(
    watchdogEmailsOnce.title,
    () => watchdogEmailsOnce.run({ name: 'memory', create: memoryLockFixture() }),
    watchdogEmailsOnce.timeoutMs,
  );
});
