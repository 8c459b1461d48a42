/**
 * The macOS and Windows device paths cannot run here; these tests pin what they derive from the
 * tools' output and which flags they open devices with. Linux's parsers are tested on real input.
 */
import { constants, readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { darwinDiskNode } from '../../../writer/platform/darwin-lifecycle.js';
import {
  darwinDiskName,
  darwinFacts,
  darwinPlatform,
  darwinRawPath,
  O_EXLOCK,
} from '../../../writer/platform/darwin.js';
import { linuxPlatform, parseMountinfo, splitDevno } from '../../../writer/platform/linux.js';
import { parsePlist, type PlistValue } from '../../../writer/platform/plist.js';
import { superfloppyVolume, systemVolume } from '../../support/windows-volumes.js';
import {
  physicalDriveNumber,
  UV_FS_O_DIRECT,
  UV_FS_O_EXLOCK,
  win32CanonicalName,
  win32Facts,
  win32Platform,
  windowsDiskQueryScript,
} from '../../../writer/platform/win32.js';

function plistFixture(name: string): { [key: string]: PlistValue } {
  return parsePlist(readFileSync(`test/fixtures/darwin/${name}.plist`, 'utf8')) as { [key: string]: PlistValue };
}

describe('macOS', () => {
  it('parses diskutil plists, entities included', () => {
    const info = plistFixture('info-disk4');
    expect(info['IORegistryEntryName']).toBe('SanDisk Ultra & Co Media');
    expect(info['TotalSize']).toBe(31914983424);
    expect(info['WholeDisk']).toBe(true);
  });

  it('describes a USB card with a mounted boot partition', () => {
    const facts = darwinFacts(
      '/dev/disk4',
      plistFixture('info-disk4'),
      plistFixture('list-disk4'),
      plistFixture('info-root'),
    );
    expect(facts).toMatchObject({
      rawPath: '/dev/rdisk4',
      isBlockDevice: true,
      isPartition: false,
      size: 31914983424,
      logicalBlockSize: 512,
      readOnly: false,
      mountpoints: ['/Volumes/bootfs'],
      isSystem: false,
    });
  });

  it('knows the disk under the APFS container that holds / is the system', () => {
    const internal = { ...plistFixture('info-disk4'), DeviceIdentifier: 'disk0' };
    expect(darwinFacts('/dev/disk0', internal, {}, plistFixture('info-root')).isSystem).toBe(true);
  });

  it('takes /dev/diskN and /dev/rdiskN (and a partition, diskNsM) as disks’ own names once links are resolved, and nothing else', () => {
    for (const name of ['/dev/disk4', '/dev/rdisk4', '/dev/disk12s1', '/dev/rdisk3s2'])
      expect(darwinDiskName(name)).toBe(name);
    for (const name of ['/Volumes/bootfs', '/dev/diskette', '/dev/disk4/x', '/tmp/dev/disk4', '/dev/fd/0'])
      expect(darwinDiskName(name)).toBeNull();
  });

  it('runs diskutil only on the device that was inspected: its raw node must have the same device number still', async () => {
    // /dev/null and /dev/zero stand in for a disk's raw node, here where there is no /dev/rdiskN.
    const inspected = {
      ...darwinFacts('/dev/null', {}, {}, {}),
      rawPath: '/dev/null',
      rdev: statSync('/dev/null').rdev,
    };
    expect(await darwinDiskNode(inspected)).toBe('/dev/null');
    await expect(darwinDiskNode({ ...inspected, rdev: statSync('/dev/zero').rdev })).rejects.toMatchObject({
      failure: { code: 'target-not-found' },
    });
    await expect(darwinDiskNode({ ...inspected, rawPath: '/dev/rdisk-gone' })).rejects.toMatchObject({
      failure: { code: 'target-not-found' },
    });
  });

  it('writes through the raw node, exclusively', () => {
    expect(darwinRawPath('/dev/disk12')).toBe('/dev/rdisk12');
    expect(darwinRawPath('/dev/disk12s1')).toBe('/dev/disk12s1');
    expect(darwinPlatform.writeFlags & O_EXLOCK).toBe(O_EXLOCK);
    expect(darwinPlatform.writeFlags & constants.O_RDWR).toBe(constants.O_RDWR);
  });
});

describe('Windows', () => {
  it('accepts only \\\\.\\PhysicalDriveN', () => {
    expect(physicalDriveNumber('\\\\.\\PhysicalDrive3')).toBe(3);
    expect(physicalDriveNumber('\\\\.\\physicaldrive10')).toBe(10);
    expect(physicalDriveNumber('\\\\.\\C:')).toBeNull();
    expect(physicalDriveNumber('C:\\image.img')).toBeNull();
  });

  it('names a disk \\\\.\\PhysicalDriveN, whatever the case and leading zeros it was given in; anything else is no disk', async () => {
    expect(win32CanonicalName('\\\\.\\PhysicalDrive3')).toBe('\\\\.\\PhysicalDrive3');
    expect(win32CanonicalName('\\\\.\\physicaldrive02')).toBe('\\\\.\\PhysicalDrive2');
    expect(win32CanonicalName('\\\\.\\C:')).toBeNull();
    expect(win32CanonicalName('\\\\?\\C:\\image.img')).toBeNull();
    expect(await win32Platform.canonicalName('\\\\.\\PHYSICALDRIVE7')).toBe('\\\\.\\PhysicalDrive7');
  });

  it('asks PowerShell about that disk, and about every volume, never the partition table', () => {
    expect(windowsDiskQueryScript(3)).toContain('$d = Get-Disk -Number 3\n');
    expect(windowsDiskQueryScript(3)).toContain('Volumes = @(Get-SluiceVolumes)');
    expect(windowsDiskQueryScript(3)).not.toContain('Get-Partition');
  });

  it('turns the query into facts: the mountpoints of the volumes with extents on the disk; boot and system disks are the system', () => {
    const query = {
      Size: 31914983424,
      LogicalSectorSize: 512,
      IsReadOnly: false,
      IsSystem: false,
      IsBoot: false,
      Volumes: [systemVolume, superfloppyVolume],
    };
    expect(win32Facts('\\\\.\\PhysicalDrive2', 2, query)).toMatchObject({
      size: 31914983424,
      mountpoints: ['E:\\'],
      isSystem: false,
      readOnly: false,
    });
    expect(win32Facts('\\\\.\\PhysicalDrive0', 0, { ...query, IsBoot: true, Volumes: systemVolume })).toMatchObject({
      isSystem: true,
      mountpoints: ['C:\\'],
    });
    expect(win32Facts('\\\\.\\PhysicalDrive9', 9, null).exists).toBe(false);
  });

  it('opens without buffering and without sharing (libuv flags)', () => {
    expect(win32Platform.writeFlags & UV_FS_O_DIRECT).toBe(UV_FS_O_DIRECT);
    expect(win32Platform.writeFlags & UV_FS_O_EXLOCK).toBe(UV_FS_O_EXLOCK);
    expect(win32Platform.readFlags & UV_FS_O_DIRECT).toBe(UV_FS_O_DIRECT);
  });
});

describe('Linux', () => {
  // /proc exists only on Linux: the one test here that reads the running system's own.
  it.runIf(process.platform === 'linux')('reads mountpoints from mountinfo, spaces escaped the kernel way', () => {
    const text = readFileSync('/proc/self/mountinfo', 'utf8');
    expect(parseMountinfo(text).some((m) => m.mountpoint === '/')).toBe(true);
    const line = '36 35 8:17 / /media/my\\040card rw,noatime shared:1 - vfat /dev/sdb1 rw';
    expect(parseMountinfo(line)).toEqual([{ devno: '8:17', mountpoint: '/media/my card' }]);
  });

  it('splits device numbers like glibc, including large minors', () => {
    expect(splitDevno(0x0811)).toEqual({ major: 8, minor: 17 });
    // major 259 (NVMe/blkext), minor 300: dev_t 0x11032c
    expect(splitDevno((259 << 8) | (300 & 0xff) | ((300 & ~0xff) << 12))).toEqual({ major: 259, minor: 300 });
  });

  it('has no disk name for what is not a block device', async () => {
    for (const path of ['/dev/null', '/proc/self/exe', '/nonexistent/sluice'])
      expect(await linuxPlatform.canonicalName(path)).toBeNull();
  });

  it('opens devices read-write, direct and exclusive', () => {
    const want = constants.O_RDWR | constants.O_DIRECT | constants.O_EXCL;
    expect(linuxPlatform.writeFlags).toBe(want);
  });
});
