/**
 * The unmount / eject seam where it cannot run here: what macOS's and Windows's code derives from
 * their tools' output, and the scripts it sends them. Linux's runs for real in
 * test/writer/platform/lifecycle.device.test.ts; its /proc parsing is checked here on this process's own maps.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TargetResult } from '../../../common/domain/result.js';
import { settleTarget } from '../../../writer/after-write.js';
import { darwinBusyMessage, parseDissenter, unmountDarwin } from '../../../writer/platform/darwin-lifecycle.js';
import { darwinIdentifiers } from '../../../writer/platform/darwin.js';
import { describeHolders, mappedDevnos, type Holder } from '../../../writer/platform/linux-holders.js';
import { devnoText } from '../../../writer/platform/linux-sysfs.js';
import { parsePlist, type PlistValue } from '../../../writer/platform/plist.js';
import { linuxPlatform } from '../../../writer/platform/linux.js';
import type { DeviceFacts, DevicePlatform } from '../../../writer/platform/types.js';
import { powershellArgs } from '../../../writer/platform/win32-disk.js';
import {
  ejectRefusal,
  ejectScript,
  lockRequest,
  parseLockReport,
  unmountWin32,
  volumeLockScript,
} from '../../../writer/platform/win32-lifecycle.js';
import { parseVolumeDiskExtents, reportedVolumes, volumesOnDisk } from '../../../writer/platform/win32-volumes.js';
import { extentsBuffer, superfloppyVolume, systemVolume } from '../../support/windows-volumes.js';

const card: DeviceFacts = {
  path: '/dev/disk4',
  rawPath: '/dev/rdisk4',
  exists: true,
  rdev: 0,
  isBlockDevice: true,
  isPartition: false,
  size: 31914983424,
  logicalBlockSize: 512,
  optimalIoSize: 0,
  readOnly: false,
  mountpoints: ['/Volumes/bootfs'],
  isSystem: false,
  devices: [],
};

describe('macOS: diskutil', () => {
  // diskutil's own words when Spotlight holds a card (as users have posted them).
  const spotlight =
    'Unmount of disk6 failed: at least one volume could not be unmounted.\n' +
    'Unmount was dissented by PID 319 (/System/Library/Frameworks/CoreServices.framework/Versions/A/Frameworks/Metadata.framework/Versions/A/Support/mds_stores).\n' +
    'Dissenter parent PPID 1 (/sbin/launchd).';

  it('names the dissenting process, not its parent', () => {
    expect(parseDissenter(spotlight)).toEqual({ pid: 319, program: 'mds_stores' });
    expect(
      parseDissenter(
        'Unmount was dissented by PID 20848 (/Applications/rekordbox 7/rekordbox.app/Contents/MacOS/rekordbox)',
      ),
    ).toEqual({ pid: 20848, program: 'rekordbox' });
    expect(parseDissenter('Dissenter PID=1234 (tail) status=0x0000c010 (kDAReturnBusy)')).toEqual({
      pid: 1234,
      program: 'tail',
    });
    expect(parseDissenter('Unmount of disk6 failed: at least one volume could not be unmounted')).toBeNull();
  });

  it('refuses with the mountpoint and the program named', () => {
    const message = darwinBusyMessage(card, `diskutil unmountDisk /dev/disk4 failed: ${spotlight}`);
    expect(message).toContain('/Volumes/bootfs (on /dev/disk4)');
    expect(message).toContain('mds_stores (pid 319) is using it');
    expect(darwinBusyMessage(card, 'timed out')).toContain('could not be unmounted: timed out');
  });

  it('unmounts the whole disk even when no mountpoint was listed (APFS volumes sit on a synthesized disk)', async () => {
    // diskutil cannot run here: a stand-in on PATH records how it is called. The disk's node is
    // this system's /dev/null, so that the check that it is still the inspected device holds.
    const bin = mkdtempSync(join(tmpdir(), 'sluice-diskutil-'));
    const calls = join(bin, 'calls');
    writeFileSync(join(bin, 'diskutil'), `#!/bin/sh\necho "$@" >> '${calls}'\n`, { mode: 0o755 });
    const path = process.env['PATH'];
    process.env['PATH'] = `${bin}:${path ?? ''}`;
    try {
      await unmountDarwin({ ...card, rawPath: '/dev/null', rdev: statSync('/dev/null').rdev, mountpoints: [] });
      expect(readFileSync(calls, 'utf8')).toBe('unmountDisk /dev/null\n');
    } finally {
      process.env['PATH'] = path;
      rmSync(bin, { recursive: true, force: true });
    }
    expect(darwinBusyMessage({ ...card, mountpoints: [] }, 'timed out')).toBe(
      'A volume on /dev/disk4 could not be unmounted: timed out. Close whatever uses it, then try again. Nothing was written.',
    );
  });

  it('finds the BSD names of a disk, its partitions and APFS volumes, for the image-on-target check', () => {
    const list = parsePlist(`<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict><key>AllDisksAndPartitions</key><array><dict>
  <key>Content</key><string>FDisk_partition_scheme</string><key>DeviceIdentifier</key><string>disk4</string>
  <key>Partitions</key><array>
    <dict><key>Content</key><string>Windows_FAT_32</string><key>DeviceIdentifier</key><string>disk4s1</string><key>MountPoint</key><string>/Volumes/bootfs</string></dict>
    <dict><key>Content</key><string>Linux</string><key>DeviceIdentifier</key><string>disk4s2</string></dict>
  </array>
</dict></array></dict></plist>`) as { [key: string]: PlistValue };
    expect(darwinIdentifiers(list)).toEqual(['disk4', 'disk4s1', 'disk4s2']);
  });
});

describe('Windows: volume locks and eject', () => {
  it('finds the volumes by their extents, never the partition table, and locks and dismounts them, then holds them until stdin closes', () => {
    const script = volumeLockScript();
    expect(script).not.toContain('Get-Partition');
    expect(script).toContain(`DeviceIoControlOut($h, ${0x00560000},`); // IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS
    expect(script).toContain(`DeviceIoControl($h, ${0x00090018},`); // FSCTL_LOCK_VOLUME
    expect(script).toContain(`DeviceIoControl($h, ${0x00090020},`); // FSCTL_DISMOUNT_VOLUME
    // GENERIC_READ | GENERIC_WRITE as decimal: PowerShell would read 0xC0000000 as a negative Int32.
    expect(script).toContain(', 3221225472, 3, [IntPtr]::Zero, 3, 0,');
    // The list first, then the volumes to lock read back (lines, not JSON), then the hold.
    expect(script).not.toContain('ConvertFrom-Json');
    expect(script.indexOf('ConvertTo-Json -InputObject @(Get-SluiceVolumes)')).toBeLessThan(
      script.indexOf('[Console]::In.ReadLine()'),
    );
    expect(script).toContain('[Console]::In.ReadToEnd()');
  });

  it('reads the extents within the bytes Windows returned, whatever the count claims', () => {
    const superfloppy = parseVolumeDiskExtents(Buffer.from(superfloppyVolume.Extents, 'base64'));
    expect(superfloppy).toEqual([{ disk: 2, start: 0, length: 31914983424 }]);
    // A volume spanning two disks (a dynamic volume): 56 bytes, as the driver returns for two.
    const spanned = extentsBuffer([
      { disk: 1, start: 1048576, length: 4096 },
      { disk: 3, start: 65536, length: 8192 },
    ]);
    expect(spanned.length).toBe(56);
    expect(parseVolumeDiskExtents(spanned).map((e) => e.disk)).toEqual([1, 3]);
    // A count beyond the buffer (ERROR_MORE_DATA leaves only the first entry): what is there, no more.
    expect(parseVolumeDiskExtents(extentsBuffer([{ disk: 4, start: 0, length: 1 }], 1000))).toHaveLength(1);
    expect(parseVolumeDiskExtents(new Uint8Array(0))).toEqual([]);
  });

  it('chooses the volumes with an extent on the disk: a superfloppy’s too, a volume spanning it too, nothing of other disks', () => {
    const spanning = {
      Volume: '\\\\?\\Volume{span}\\',
      Extents: extentsBuffer([
        { disk: 1, start: 0, length: 1 },
        { disk: 2, start: 0, length: 1 },
      ]).toString('base64'),
      Paths: null,
    };
    const cdromWithoutDisc = { Volume: '\\\\?\\Volume{cd}\\', Extents: '', Paths: 'D:\\' };
    const all = [systemVolume, superfloppyVolume, spanning, cdromWithoutDisc];
    expect(volumesOnDisk(all, 2)).toEqual([
      { volume: superfloppyVolume.Volume, paths: ['E:\\'] },
      { volume: '\\\\?\\Volume{span}\\', paths: [] },
    ]);
    expect(volumesOnDisk(all, 0).map((v) => v.paths)).toEqual([['C:\\']]);
    expect(volumesOnDisk(all, 7)).toEqual([]);
    // ConvertTo-Json prints one volume as an object and none as nothing.
    expect(reportedVolumes(superfloppyVolume)).toEqual([superfloppyVolume]);
    expect(reportedVolumes(null)).toEqual([]);
    // Windows PowerShell 5.1 may wrap an array as { value, Count }; anything else unknown is refused.
    expect(
      reportedVolumes({
        value: [systemVolume, { ...superfloppyVolume, Paths: { value: ['E:\\'], Count: 1 } }],
        Count: 2,
      }),
    ).toEqual([systemVolume, { ...superfloppyVolume, Paths: ['E:\\'] }]);
    expect(() => reportedVolumes([{ Volume: superfloppyVolume.Volume }])).toThrow(
      'unexpected volume in the volume list',
    );
    expect(() => reportedVolumes([{ ...superfloppyVolume, Paths: [3] }])).toThrow(
      'unexpected volume in the volume list',
    );
    // One line per volume (its path, a tab, its name), then an empty line: no JSON for PowerShell 5.1 to unroll.
    expect(lockRequest(volumesOnDisk(all, 2))).toBe(
      `${superfloppyVolume.Volume}\tE:\\\n\\\\?\\Volume{span}\\\t\\\\?\\Volume{span}\\\n\n`,
    );
    expect(lockRequest([])).toBe('\n');
  });

  // PowerShell cannot run here: a stand-in powershell.exe plays the script's side of the
  // conversation (the volume list, one line read back, the report, the hold) so that what the
  // helper says and when it lets go are checked; the script itself runs in the Windows CI job.
  describe.runIf(process.platform !== 'win32')('the conversation with the lock script', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-fake-powershell-'));
    const asked = join(dir, 'asked');
    const released = join(dir, 'released');
    const fake = (report: string) =>
      writeFileSync(
        join(dir, 'powershell.exe'),
        `#!/bin/sh\nprintf '%s\\n' '${JSON.stringify([systemVolume, superfloppyVolume])}'\n: > '${asked}'\nwhile IFS= read -r line && [ -n "$line" ]; do printf '%s\\n' "$line" >> '${asked}'; done\nprintf '%s\\n' '${report}'\ncat > /dev/null\necho yes > '${released}'\n`,
        { mode: 0o755 },
      );
    const facts = { ...card, path: '\\\\.\\PhysicalDrive2', rawPath: '\\\\.\\PhysicalDrive2' };
    const path = process.env['PATH'];
    beforeAll(() => (process.env['PATH'] = `${dir}:${path ?? ''}`));
    afterAll(() => {
      process.env['PATH'] = path;
      rmSync(dir, { recursive: true, force: true });
    });

    it('asks to lock the superfloppy’s volume, and releases it only when told', async () => {
      fake('{"Held":1}');
      rmSync(released, { force: true });
      const hold = await unmountWin32(facts);
      expect(readFileSync(asked, 'utf8')).toBe(`${superfloppyVolume.Volume}\tE:\\\n`);
      expect(existsSync(released)).toBe(false);
      await hold.release();
      expect(readFileSync(released, 'utf8')).toBe('yes\n');
    });

    it('refuses with the busy volume named, nothing written', async () => {
      fake('{"Busy":"E:\\\\","Error":"a program has files open on it"}');
      await expect(unmountWin32(facts)).rejects.toMatchObject({
        failure: {
          code: 'target-busy',
          message: String.raw`E:\ (on \\.\PhysicalDrive2) is in use: a program has files open on it. Close the programs and windows using it, then try again. Nothing was written.`,
        },
      });
    });
  });

  it('sends scripts base64-encoded as UTF-16LE, so no quoting rule can alter them', () => {
    const script = 'Write-Output "E:\\" \'quoted\' `$x';
    const args = powershellArgs(script);
    expect(args.slice(0, 3)).toEqual(['-NoProfile', '-NonInteractive', '-EncodedCommand']);
    expect(Buffer.from(args[3] ?? '', 'base64').toString('utf16le')).toBe(script);
  });

  it('reads the lock script’s report', () => {
    expect(parseLockReport('{"Held":2}')).toEqual({ held: 2 });
    expect(parseLockReport('{"Busy":"E:\\\\","Error":"a program has files open on it"}')).toEqual({
      busy: 'E:\\',
      error: 'a program has files open on it',
    });
    expect(() => parseLockReport('{"Something":1}')).toThrow('unexpected output');
  });

  it('ejects through the disk’s device node, reporting a veto in words', () => {
    expect(ejectScript(3)).toContain('-Filter "Index = 3"');
    expect(ejectScript(3)).toContain("StartsWith('USB\\')");
    expect(ejectRefusal('{"Result":0,"Veto":0,"VetoName":""}')).toBeNull();
    expect(ejectRefusal('{"Result":23,"Veto":5,"VetoName":"STORAGE\\\\Volume\\\\{4d36e967}"}')).toBe(
      'a program has it open (STORAGE\\Volume\\{4d36e967})',
    );
    expect(ejectRefusal('{"Result":13,"Veto":0,"VetoName":""}')).toBe('configuration manager error 13');
  });
});

describe('Linux: who holds a filesystem', () => {
  // /proc exists only on Linux: the one test here that reads the running system's own.
  it.runIf(process.platform === 'linux')(
    'reads the device numbers this process has mapped (its own binary among them)',
    () => {
      const own = mappedDevnos(readFileSync('/proc/self/maps', 'utf8'));
      expect(own).toContain(devnoText(statSync(process.execPath).dev));
      expect(
        mappedDevnos('7f00-7f01 r--p 00000000 103:02 1234 /lib/x.so\n7f02-7f03 rw-p 00000000 00:00 0 [heap]'),
      ).toEqual(new Set(['259:2']));
    },
  );

  it('names at most three programs, and counts the rest', () => {
    const holder = (pid: number, how: Holder['how']): Holder => ({ pid, command: 'bash', how, devno: '259:1' });
    expect(describeHolders([holder(7, 'working directory')])).toBe('bash (pid 7: its working directory is inside it)');
    expect(describeHolders([1, 2, 3, 4].map((pid) => holder(pid, 'open file')))).toMatch(
      /pid 3: it has a file open there\) and 1 more$/,
    );
  });
});

describe('after the write', () => {
  const ok: TargetResult = { status: 'ok', target: '/dev/sdz', bytes: 1, written: true, verified: true, seconds: 1 };
  /** The real Linux seam, with eject and re-read replaced by ones that record or fail as a test needs. */
  function seam(eject: () => Promise<boolean>, calls: string[]): DevicePlatform {
    return {
      ...linuxPlatform,
      eject: () => (calls.push('eject'), eject()),
      rereadPartitions: () => (calls.push('reread'), Promise.resolve()),
    };
  }
  const facts: DeviceFacts = { ...card, path: '/dev/sdz', rawPath: '/dev/sdz' };

  it('ejects after a good write and then leaves the gone drive alone', async () => {
    const calls: string[] = [];
    expect(
      await settleTarget(
        facts,
        ok,
        true,
        seam(() => Promise.resolve(true), calls),
      ),
    ).toEqual({ ...ok, ejected: true });
    expect(calls).toEqual(['eject']);
  });

  it('turns a failed eject into a warning on a result that stays ok, and re-reads partitions instead', async () => {
    const calls: string[] = [];
    const settled = await settleTarget(
      facts,
      ok,
      true,
      seam(() => Promise.reject(new Error('udisksctl: device is busy')), calls),
    );
    expect(settled).toMatchObject({
      status: 'ok',
      ejected: false,
      warnings: [expect.stringContaining('could not be ejected (udisksctl: device is busy)') as unknown],
    });
    expect(calls).toEqual(['eject', 'reread']);
  });

  it('never ejects after a failure, but still makes the kernel drop the stale partitions', async () => {
    const calls: string[] = [];
    const failed: TargetResult = {
      status: 'failed',
      target: '/dev/sdz',
      bytes: 5,
      code: 'write-error',
      message: 'I/O error',
    };
    expect(
      await settleTarget(
        facts,
        failed,
        true,
        seam(() => Promise.resolve(true), calls),
      ),
    ).toEqual(failed);
    expect(calls).toEqual(['reread']);
  });
});
