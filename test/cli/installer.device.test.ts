import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { assertTestTarget, collect, spawnCli } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { BOOT_MARKER, bootUnderOvmf, efiInstallerIso } from '../support/installer-fixtures.js';
import { discFixture } from '../support/iso-fixtures.js';
import { createLoop, scratchDir } from '../support/loop-device.js';
import { sh } from '../support/os-image.js';

const STICK_BYTES = 128 * MiB;
const PARTITION_START = 4 * MiB;

describeDevices('installer mode: the files of an ISO made into a stick', () => {
  let iso: string;
  beforeAll(() => {
    const started = performance.now();
    iso = efiInstallerIso();
    console.log(`fixture ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  });

  it('one active FAT32 partition at 4 MiB, fsck clean, every file identical, and OVMF boots its loader', async () => {
    const dir = scratchDir();
    const loop = createLoop({ size: STICK_BYTES });
    assertTestTarget(loop.path);
    const run = await collect(spawnCli(['flash', '--yes', '--iso-mode', 'files', iso, loop.path]));
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toMatch(
      /made an installer stick: one FAT32 partition of .* holding the ISO's 47 files .*, written and read back in /,
    );
    const disk = readFileSync(loop.backing);
    // The layout: an MBR with one active FAT32 (LBA) partition from 4 MiB to the end, and no ISO 9660 left.
    expect(disk.readUInt16LE(510)).toBe(0xaa55);
    expect([disk[446], disk[450], disk.readUInt32LE(454), disk.readUInt32LE(458)]).toEqual([
      0x80,
      0x0c,
      PARTITION_START / 512,
      (STICK_BYTES - PARTITION_START) / 512,
    ]);
    expect(disk.subarray(462, 510).every((b) => b === 0)).toBe(true);
    expect(disk.toString('latin1', 32769, 32774)).not.toBe('CD001');
    const partition = join(dir, 'partition.img');
    sh(dir, `dd if=${loop.backing} of=partition.img bs=4M skip=1 status=none`);
    // fsck.fat exits non-zero on any fault; it counts the 5 folders among the files.
    expect(execFileSync('fsck.fat', ['-n', '-V', partition], { encoding: 'utf8' })).toMatch(
      /: 52 files, \d+\/\d+ clusters\n$/,
    );
    sh(
      dir,
      `mkdir stick disc && mcopy -s -n -i partition.img ::/ stick/ && xorriso -osirrox on -indev ${iso} -extract / disc 2>/dev/null`,
    );
    sh(dir, 'diff -r stick disc');
    expect(
      readFileSync(
        join(dir, 'stick/casper/a folder with a long name/deeper still/Ünïcödé name, with spaces.txt'),
        'utf8',
      ),
    ).toBe('long names survive\n');
    const boot = bootUnderOvmf(loop.backing, dir);
    console.log(`booted to the loader in ${boot.seconds.toFixed(1)} s`);
    expect(boot.output).toContain(BOOT_MARKER);
  }, 240_000);

  it('a Windows-like UDF ISO: its UDF tree copied, every file identical to what the ISO was made from', async () => {
    const dir = scratchDir();
    const iso = discFixture(dir, 'windows');
    const loop = createLoop({ size: 64 * MiB });
    assertTestTarget(loop.path);
    const run = await collect(spawnCli(['flash', '--yes', '--iso-mode', 'files', iso, loop.path]));
    expect(run.code, run.stderr + run.stdout).toBe(0);
    sh(
      dir,
      `dd if=${loop.backing} of=partition.img bs=4M skip=1 status=none && fsck.fat -n partition.img >/dev/null && mkdir stick && mcopy -s -n -i partition.img ::/ stick/`,
    );
    sh(dir, 'diff -r stick tree');
  });

  it('with --no-verify, the stick is never said to be read back', async () => {
    const dir = scratchDir();
    const loop = createLoop({ size: 64 * MiB });
    assertTestTarget(loop.path);
    const run = await collect(
      spawnCli(['flash', '--yes', '--no-verify', '--iso-mode', 'files', discFixture(dir, 'windows'), loop.path]),
    );
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toContain('written but NOT verified (--no-verify)');
    expect(run.stdout).not.toContain('read back');
  });
});
