// The shared fleet suite on PostgresLock, part 1 of 2 (see ./fleet-suite.ts): the two parts run side by side.
import { runFleetConformance } from '@fleetcron/conformance';
import { fleetPart } from './fleet-suite.js';

runFleetConformance(fleetPart(1));
