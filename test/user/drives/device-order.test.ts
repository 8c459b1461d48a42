/** The order drives are listed in: by name, numbers by their value. */
import { describe, expect, it } from 'vitest';
import { byDevice } from '../../../user/drives/list-drives.js';

describe('the drive order', () => {
  it('puts /dev/loop2 before /dev/loop10 and /dev/sdb before /dev/sdc', () => {
    expect(
      ['/dev/sdc', '/dev/loop10', '/dev/mmcblk0', '/dev/loop2', '/dev/sdb', '/dev/nvme0n1'].sort(byDevice),
    ).toEqual(['/dev/loop2', '/dev/loop10', '/dev/mmcblk0', '/dev/nvme0n1', '/dev/sdb', '/dev/sdc']);
  });
});
