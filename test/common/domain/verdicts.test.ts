/**
 * The safety verdicts over drivelist's own output shapes: captured here for Linux, written from
 * drivelist's native listers for macOS and Windows (see test/fixtures/drivelist/README.md).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Drive } from '../../../common/domain/drive.js';
import {
  findImageDrive,
  isDriveShown,
  judgeDrive,
  LARGE_DRIVE_BYTES,
  refusalFailure,
  refusalOf,
  verdictEffect,
  type ImageFacts,
} from '../../../common/domain/verdict.js';
import { GiB } from '../../../common/domain/units.js';
import { recogniseSdCards } from '../../../user/drives/linux-sd-slots.js';
import { darwinDrives, drivelistFixture, linuxDrives, usbCard, win32Drives } from '../../support/drive-fixtures.js';

/** A 4 GB image stored on none of the drives. */
const image: ImageFacts = { size: 4_000_000_000, storedOn: null };
const hidden = { showAll: false, showVirtual: false };

interface Row {
  bus: Drive['bus'];
  system: Drive['system'];
  /** Verdict kinds for the 4 GB image, in order. */
  kinds: string[];
  /** The first verdict's effect; null when there are none. */
  effect: string | null;
  /** Listed with the default settings (system and virtual drives hidden). */
  shown: boolean;
}

const table: [string, string, Drive[], Row][] = [
  [
    'Linux',
    '/dev/vda',
    linuxDrives,
    { bus: 'other', system: 'running', kinds: ['system', 'large'], effect: 'refuse', shown: false },
  ],
  [
    'Linux',
    '/dev/zram0',
    linuxDrives,
    { bus: 'virtual', system: null, kinds: ['too-small', 'virtual'], effect: 'refuse', shown: false },
  ],
  ['Linux', '/dev/sdb', linuxDrives, { bus: 'usb', system: null, kinds: ['mounted'], effect: 'note', shown: true }],
  [
    'Linux',
    '/dev/mmcblk0',
    linuxDrives,
    { bus: 'sd', system: 'internal', kinds: ['read-only', 'system'], effect: 'refuse', shown: false },
  ],
  [
    'macOS',
    '/dev/disk0',
    darwinDrives,
    { bus: 'pcie', system: 'running', kinds: ['system', 'large'], effect: 'refuse', shown: false },
  ],
  [
    'macOS',
    '/dev/disk1',
    darwinDrives,
    { bus: 'virtual', system: 'running', kinds: ['system', 'large', 'virtual'], effect: 'refuse', shown: false },
  ],
  ['macOS', '/dev/disk4', darwinDrives, { bus: 'sd', system: null, kinds: ['mounted'], effect: 'note', shown: true }],
  [
    'macOS',
    '/dev/disk5',
    darwinDrives,
    { bus: 'usb', system: null, kinds: ['read-only'], effect: 'refuse', shown: true },
  ],
  [
    'macOS',
    '/dev/disk6',
    darwinDrives,
    { bus: 'virtual', system: null, kinds: ['mounted', 'virtual'], effect: 'note', shown: false },
  ],
  [
    'Windows',
    '\\\\.\\PhysicalDrive0',
    win32Drives,
    { bus: 'pcie', system: 'running', kinds: ['system', 'large'], effect: 'refuse', shown: false },
  ],
  [
    'Windows',
    '\\\\.\\PhysicalDrive1',
    win32Drives,
    { bus: 'usb', system: null, kinds: ['mounted'], effect: 'note', shown: true },
  ],
  [
    'Windows',
    '\\\\.\\PhysicalDrive2',
    win32Drives,
    { bus: 'sd', system: null, kinds: ['read-only'], effect: 'refuse', shown: true },
  ],
  [
    'Windows',
    '\\\\.\\PhysicalDrive3',
    win32Drives,
    {
      bus: 'virtual',
      system: 'internal',
      kinds: ['system', 'mounted', 'virtual'],
      effect: 'confirm-by-name',
      shown: false,
    },
  ],
  [
    'Windows',
    '\\\\.\\PhysicalDrive4',
    win32Drives,
    { bus: 'usb', system: null, kinds: ['large', 'mounted'], effect: 'warn', shown: true },
  ],
  [
    'Windows',
    '\\\\.\\PhysicalDrive5',
    win32Drives,
    { bus: 'sata', system: 'internal', kinds: ['system', 'large', 'mounted'], effect: 'confirm-by-name', shown: false },
  ],
];

describe('verdicts over drivelist output', () => {
  it.each(table)('%s %s', (_os, device, drives, row) => {
    const drive = drives.find((d) => d.device === device);
    expect(drive).toBeDefined();
    if (drive === undefined) return;
    expect({ bus: drive.bus, system: drive.system }).toEqual({ bus: row.bus, system: row.system });
    const verdicts = judgeDrive(drive, image);
    expect(verdicts.map((v) => v.kind)).toEqual(row.kinds);
    expect(verdicts[0] === undefined ? null : verdictEffect(verdicts[0])).toBe(row.effect);
    expect(isDriveShown(drive, hidden)).toBe(row.shown);
    expect(isDriveShown(drive, { showAll: true, showVirtual: false })).toBe(true);
  });

  it('covers every drive drivelist listed, and drops the one it could not read', () => {
    expect(table.filter(([os]) => os === 'Linux')).toHaveLength(linuxDrives.length);
    expect(table.filter(([os]) => os === 'macOS')).toHaveLength(darwinDrives.length);
    expect(table.filter(([os]) => os === 'Windows')).toHaveLength(win32Drives.length);
    expect(drivelistFixture('win32.json')).toHaveLength(win32Drives.length + 1);
  });

  it('keeps what the UI shows: raw node, sizes, block sizes, mountpoints, partition table', () => {
    expect(darwinDrives.find((d) => d.device === '/dev/disk4')).toMatchObject({
      raw: '/dev/rdisk4',
      description: 'SD Card Reader',
      size: 31914983424,
      logicalBlockSize: 512,
      physicalBlockSize: 512,
      removable: true,
      readOnly: false,
      mountpoints: ['/Volumes/bootfs'],
      partitionTable: 'mbr',
    });
    expect(linuxDrives.find((d) => d.device === '/dev/vda')).toMatchObject({
      logicalBlockSize: 512,
      physicalBlockSize: 4096,
      mountpoints: ['/'],
    });
    expect(linuxDrives.find((d) => d.device === '/dev/zram0')?.size).toBeNull();
    expect(linuxDrives.find((d) => d.device === '/dev/sdb')?.description).toBe('SanDisk Ultra (bootfs, rootfs)');
  });

  it('shows virtual drives when asked, but system disks only with "show all"', () => {
    const zram = linuxDrives.find((d) => d.device === '/dev/zram0');
    const vda = linuxDrives.find((d) => d.device === '/dev/vda');
    expect(zram && isDriveShown(zram, { showAll: false, showVirtual: true })).toBe(true);
    expect(vda && isDriveShown(vda, { showAll: false, showVirtual: true })).toBe(false);
  });
});

describe('the rules themselves', () => {
  const size = 32_000_000_000;
  const card = usbCard('/dev/sdz', { size });

  it('accepts a card the image fits on exactly, and says nothing about it', () => {
    expect(judgeDrive(card, { size, storedOn: null })).toEqual([]);
    expect(judgeDrive(card, null)).toEqual([]);
    expect(judgeDrive(card, { size: null, storedOn: null })).toEqual([]);
  });

  it('refuses one byte too many, naming both sizes', () => {
    const refusal = refusalOf(judgeDrive(card, { size: size + 1, storedOn: null }));
    expect(refusal && refusalFailure(refusal)).toEqual({
      code: 'target-too-small',
      message: expect.stringMatching(/32000000001 bytes.*32000000000 bytes/) as unknown,
    });
  });

  it('takes a lower bound (gzip’s trailer) as a size the drive must hold at least, and says "at least"', () => {
    const refusal = refusalOf(judgeDrive(card, { size: size + 1, atLeast: true, storedOn: null }));
    expect(refusal && refusalFailure(refusal)).toEqual({
      code: 'target-too-small',
      message: expect.stringMatching(
        /needs at least 32\.0 GB \(32000000001 bytes\), the drive has 32\.0 GB \(32000000000 bytes\)/,
      ) as unknown,
    });
    // The real size may be larger still (by multiples of 4 GiB): a drive the bound fits passes, and the writer stops at its end.
    expect(judgeDrive(card, { size, atLeast: true, storedOn: null })).toEqual([]);
  });

  it('refuses the drive the image is stored on', () => {
    const refusal = refusalOf(judgeDrive(card, { size: 1, storedOn: '/dev/sdz' }));
    expect(refusal && refusalFailure(refusal).code).toBe('target-is-source');
    expect(judgeDrive(card, { size: 1, storedOn: '/dev/sdy' })).toEqual([]);
  });

  it('warns above 128 GiB, so every card sold as "128 GB" passes quietly', () => {
    expect(judgeDrive({ ...card, size: 128_043_712_512 }, null)).toEqual([]);
    expect(judgeDrive({ ...card, size: LARGE_DRIVE_BYTES }, null)).toEqual([]);
    expect(judgeDrive({ ...card, size: 256 * 10 ** 9 }, null).map((v) => v.kind)).toEqual(['large']);
    expect(LARGE_DRIVE_BYTES).toBe(128 * GiB);
  });

  it('does not offer to unmount the running system: it is refused for holding it', () => {
    const verdicts = judgeDrive({ ...card, system: 'running', mountpoints: ['/', '/home'] }, null);
    expect(verdicts.map((v) => v.kind)).toEqual(['system']);
    expect(verdicts[0]?.message).toContain('running system (/, /home)');
    // macOS knows its system disk through APFS even when nothing is mounted from the disk itself.
    expect(judgeDrive({ ...card, system: 'running' }, null)[0]?.message).toBe(
      '/dev/sdz holds the running system. Sluice will not overwrite it.',
    );
  });
});

describe('which drive stores the image', () => {
  const drives = [
    { device: '/dev/vda', mountpoints: ['/'] },
    { device: '/dev/sdb', mountpoints: ['/media/pi/bootfs'] },
    { device: '\\\\.\\PhysicalDrive1', mountpoints: ['E:\\'] },
  ];

  it.each([
    ['/media/pi/bootfs/raspios.img', '/dev/sdb'],
    ['/media/pi/bootfs', '/dev/sdb'],
    ['/media/pi/bootfs2/raspios.img', '/dev/vda'],
    ['/home/me/raspios.img', '/dev/vda'],
    ['E:\\Downloads\\raspios.img', '\\\\.\\PhysicalDrive1'],
    ['e:/downloads/raspios.img', '\\\\.\\PhysicalDrive1'],
    ['F:\\raspios.img', null],
  ])('%s is on %s', (path, device) => {
    expect(findImageDrive(path, drives)).toBe(device);
  });
});

describe('Linux SD slots', () => {
  const sys = mkdtempSync('/tmp/sluice-test-sysblock-');
  afterAll(() => rmSync(sys, { recursive: true, force: true }));
  for (const [name, type] of [
    ['mmcblk0', 'SD'],
    ['mmcblk1', 'MMC'],
  ] as const) {
    mkdirSync(join(sys, name, 'device'), { recursive: true });
    writeFileSync(join(sys, name, 'device', 'type'), `${type}\n`);
  }

  it('treats a card in the board’s own slot as a card, and soldered eMMC as internal', async () => {
    const slot = linuxDrives.find((d) => d.device === '/dev/mmcblk0');
    expect(slot?.system).toBe('internal');
    if (slot === undefined) return;
    const [card, emmc] = await recogniseSdCards([slot, { ...slot, device: '/dev/mmcblk1' }], sys);
    expect(card).toMatchObject({ system: null, removable: true });
    expect(emmc).toMatchObject({ system: 'internal' });
  });
});
