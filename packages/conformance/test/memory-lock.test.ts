// The reference lock through the whole lock suite; the scenarios hold the assertions.
import { runLockConformance } from '../src/run-lock.js';
import { memoryLockFixture } from './memory-fixture.js';

runLockConformance({ name: 'memory', create: memoryLockFixture(), inProcess: true });
