// Real Schedulers on SqliteLock, in real time, through the shared fleet suite (its scenarios hold
// the assertions; ./fixture.ts): part 2 of 2, so that the two parts run side by side. Each
// fixture is a SQLite file of its own.
import { runFleetConformance } from '@fleetcron/conformance';
import { lockFixtures } from './fixture.js';

const electorless = 'SQLite has no elector';
runFleetConformance({
  name: 'sqlite',
  create: lockFixtures(),
  electorless,
  part: { index: 2, of: 2 },
});
