import { describe, expect, it } from 'vitest';
import type { DeviceFacts } from '../../writer/platform/types.js';
import { refuseTarget } from '../../writer/target-check.js';

const card: DeviceFacts = {
  path: '/dev/sdz',
  rawPath: '/dev/sdz',
  exists: true,
  rdev: 2096,
  devices: [2096, 2097],
  isBlockDevice: true,
  isPartition: false,
  size: 32_000_000_000,
  logicalBlockSize: 512,
  optimalIoSize: 0,
  readOnly: false,
  mountpoints: [],
  isSystem: false,
};

describe('refuseTarget', () => {
  it('accepts a whole, writable, unmounted disk big enough for the image', () => {
    expect(refuseTarget(card, 4_000_000_000, null)).toBeNull();
    expect(refuseTarget(card, card.size, null)).toBeNull();
    expect(refuseTarget(card, null, null)).toBeNull();
    // Mounted is not a refusal here: the helper unmounts before it opens.
    expect(refuseTarget({ ...card, mountpoints: ['/media/card'] }, 1, null)).toBeNull();
  });

  it.each<[string, Partial<DeviceFacts>, number | null, string]>([
    ['missing', { exists: false }, 1, 'target-not-found'],
    ['a regular file', { isBlockDevice: false }, 1, 'target-not-block-device'],
    ['a partition', { isPartition: true }, 1, 'target-is-partition'],
    ['the system disk', { isSystem: true, mountpoints: ['/'] }, 1, 'target-system'],
    ['write-protected', { readOnly: true }, 1, 'target-read-only'],
    ['one byte too small', {}, 32_000_000_001, 'target-too-small'],
  ])('refuses %s', (_name, facts, imageSize, code) => {
    expect(refuseTarget({ ...card, ...facts }, imageSize, null)?.code).toBe(code);
  });

  it('refuses an image stored on the target itself (its file lives on one of the disk’s devices)', () => {
    expect(refuseTarget(card, 1, 2097)?.code).toBe('target-is-source');
    expect(refuseTarget(card, 1, 9999)).toBeNull();
  });

  it('puts "system" before "mounted": the system disk is always mounted, and must say why it is refused', () => {
    expect(refuseTarget({ ...card, isSystem: true, mountpoints: ['/', '/home'] }, 1, null)?.message).toContain(
      'running system',
    );
  });

  it('names the sizes in the too-small message', () => {
    expect(refuseTarget({ ...card, size: 1_000_000 }, 2_000_000, null)?.message).toMatch(
      /2000000 bytes.*1000000 bytes/,
    );
  });
});
