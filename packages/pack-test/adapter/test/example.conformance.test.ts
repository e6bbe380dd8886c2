// The adapter's own lock (a MemoryLock inside) through the whole lock suite.
import { runLockConformance } from '@fleetcron/conformance';
import { exampleLockFixtures } from './example-fixture.js';

runLockConformance({ name: 'example', create: exampleLockFixtures(), inProcess: true });
