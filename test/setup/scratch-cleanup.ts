/**
 * Every test file ends by undoing what test/support/loop-device.ts set up for it: its scratch
 * directories, mounts and loops. describeDevices does so for the device suites; the other files
 * that take a scratchDir (customisation, decoders, ISO checks…) would leave theirs on /dev/shm,
 * about 45 directories a CI run.
 */
import { afterAll } from 'vitest';
import { cleanupLoops } from '../support/loop-device.js';

afterAll(() => cleanupLoops());
