import { describe, expect, it } from 'vitest';
import { driveVerdicts, LARGE_DRIVE_BYTES, sourceDevice, toDriveInfos } from '../../electron/core/drive-view.js';
import type { ProbedImage } from '../../electron/core/image-probe.js';
import type { ScannedDrive } from '../../electron/core/scanned-drive.js';

function drive(overrides: Partial<ScannedDrive>): ScannedDrive {
  return { device: '/dev/sdb', description: 'SanDisk Ultra', size: 32e9, bus: 'USB', removable: true, virtual: false, readOnly: false, system: false, mountpoints: [], ...overrides };
}

const system = drive({ device: '/dev/nvme0n1', description: 'Samsung SSD', size: 512e9, bus: 'NVME', removable: false, system: true, mountpoints: ['/', '/home'] });
const media = drive({ device: '/dev/sdc', mountpoints: ['/media/user/USB'] });

describe('the drive that holds the image', () => {
  it('is the one with the deepest mountpoint above the image', () => {
    expect(sourceDevice([system, media], '/media/user/USB/os.img')).toBe('/dev/sdc');
    expect(sourceDevice([system, media], '/home/user/os.img')).toBe('/dev/nvme0n1');
  });

  it('is not fooled by a mountpoint that is only a string prefix', () => {
    expect(sourceDevice([system, media], '/media/user/USB2/os.img')).toBe('/dev/nvme0n1');
  });
});

describe('verdicts', () => {
  it('a card big enough for the image has none', () => {
    expect(driveVerdicts(drive({}), 4e9, false)).toEqual([]);
  });

  it('too small, read-only, the image\'s own drive, system, large', () => {
    expect(driveVerdicts(drive({ size: 2e9 }), 4e9, false)).toEqual(['too-small']);
    expect(driveVerdicts(drive({ readOnly: true }), 4e9, false)).toEqual(['read-only']);
    expect(driveVerdicts(drive({}), 4e9, true)).toEqual(['source']);
    expect(driveVerdicts(system, 4e9, true)).toEqual(['source', 'system', 'large']);
    expect(driveVerdicts(drive({ size: LARGE_DRIVE_BYTES }), null, false)).toEqual([]);
    expect(driveVerdicts(drive({ size: LARGE_DRIVE_BYTES + 1 }), null, false)).toEqual(['large']);
  });

  it('without an image (or with an unknown size) nothing is too small', () => {
    expect(driveVerdicts(drive({ size: 1 }), null, false)).toEqual([]);
  });
});

describe('the picker view', () => {
  it('names drives, falling back to their bus, and applies the image', () => {
    const image = { info: { uncompressedSize: 64e9 }, realPath: '/media/user/USB/os.img' } as ProbedImage;
    const infos = toDriveInfos([system, media, drive({ device: '/dev/sdd', description: '', size: 128e9 })], image);
    expect(infos.map((d) => [d.device, d.name, d.verdicts])).toEqual([
      ['/dev/nvme0n1', 'Samsung SSD', ['system', 'large']],
      ['/dev/sdc', 'SanDisk Ultra', ['too-small', 'source']],
      ['/dev/sdd', 'Unnamed USB drive', []],
    ]);
  });
});
