/**
 * The engine opens a disk only as the kind of node it inspected: on Linux a block device. Linux
 * numbers block and character devices apart (block 1:x is a RAM disk, character 1:1 is /dev/mem),
 * so a character device that carries the inspected number is not the disk.
 */
import { constants, statSync } from 'node:fs';
import { expect, it } from 'vitest';
import { openInspected } from '../../writer/open-device.js';
import type { DeviceFacts } from '../../writer/platform/types.js';

it.skipIf(process.platform !== 'linux')(
  'refuses a character device even when its number is the one inspected',
  async () => {
    const facts = { path: '/dev/null', rawPath: '/dev/null', rdev: statSync('/dev/null').rdev } as DeviceFacts;
    await expect(
      openInspected(facts, constants.O_RDONLY, () => ({ code: 'internal', message: 'open failed' })),
    ).rejects.toMatchObject({
      failure: {
        code: 'target-not-found',
        message: '/dev/null changed between checking and opening it; refusing to use it.',
      },
    });
  },
);
