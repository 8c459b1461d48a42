/**
 * Drives for tests of the verdicts and of what uses them: drivelist's own output shapes from
 * test/fixtures/drivelist (see its README) in Sluice's model, and a plain USB card.
 */
import { readFileSync } from 'node:fs';
import type drivelist from 'drivelist';
import { parse as parseLsblk } from 'drivelist/js/lsblk/json.js';
import type { Drive } from '../../common/domain/drive.js';
import { drivesFromDrivelist, runningSystemMountpoints } from '../../user/drives/from-drivelist.js';

/** One fixture file as drivelist.list() returns it. */
export function drivelistFixture(name: string): drivelist.Drive[] {
  return JSON.parse(readFileSync(`test/fixtures/drivelist/${name}`, 'utf8')) as drivelist.Drive[];
}

const posix = runningSystemMountpoints('linux', {});

/** The VM's own listing plus a USB stick and a board SD slot, through drivelist's lsblk parser. */
export const linuxDrives: Drive[] = drivesFromDrivelist(
  [
    ...drivelistFixture('linux-vm.json'),
    ...parseLsblk(readFileSync('test/fixtures/drivelist/linux-lsblk-removable.json', 'utf8')),
  ],
  posix,
);
export const darwinDrives: Drive[] = drivesFromDrivelist(drivelistFixture('darwin.json'), posix);
export const win32Drives: Drive[] = drivesFromDrivelist(
  drivelistFixture('win32.json'),
  runningSystemMountpoints('win32', { SystemDrive: 'C:' }),
);

/** A 32 GB USB card with nothing mounted, as the scanner lists one. */
export function usbCard(device = '/dev/sdz', overrides: Partial<Drive> = {}): Drive {
  return {
    device,
    raw: device,
    description: 'Card',
    size: 32_000_000_000,
    logicalBlockSize: 512,
    physicalBlockSize: 512,
    bus: 'usb',
    removable: true,
    readOnly: false,
    virtual: false,
    system: null,
    mountpoints: [],
    partitionTable: null,
    medium: null,
    ...overrides,
  };
}
