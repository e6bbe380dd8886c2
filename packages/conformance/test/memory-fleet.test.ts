import { runFleetConformance } from '../src/index.js';
import { memoryLockFixture } from './memory-fixture.js';

runFleetConformance({ name: 'memory', create: memoryLockFixture() });
