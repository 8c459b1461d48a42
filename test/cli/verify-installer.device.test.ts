import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { assertTestTarget, collect, spawnCli } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { efiInstallerIso } from '../support/installer-fixtures.js';
import { createLoop } from '../support/loop-device.js';

/** Where the file's first 64 KiB lie in the stick's backing file (its bytes are random: found once). */
function offsetOnStick(backing: string, file: string): number {
  const at = readFileSync(backing).indexOf(readFileSync(file).subarray(0, 64 * 1024));
  expect(at).toBeGreaterThan(0);
  return at;
}

describeDevices('sluice verify ISO DEVICE --iso-mode files', () => {
  let iso: string;
  beforeAll(() => {
    iso = efiInstallerIso();
  });

  it('finds every file identical on a fresh stick, and names the file a corrupted byte is in, and where', async () => {
    const loop = createLoop({ size: 128 * MiB });
    assertTestTarget(loop.path);
    const flash = await collect(spawnCli(['flash', '--yes', '--iso-mode', 'files', iso, loop.path]));
    expect(flash.code, flash.stderr + flash.stdout).toBe(0);

    const clean = await collect(spawnCli(['verify', '--iso-mode', 'files', iso, loop.path]));
    expect(clean.code, clean.stderr + clean.stdout).toBe(0);
    expect(clean.stdout).toMatch(/: every file of .* \(47 files, .*\) is on the stick, identical\.\n$/);

    const squashfs = offsetOnStick(loop.backing, join(iso, '..', 'tree/casper/filesystem.squashfs'));
    const fd = openSync(loop.backing, 'r+');
    writeSync(fd, Buffer.from([readFileSync(loop.backing)[squashfs + 1_234_567]! ^ 0xff]), 0, 1, squashfs + 1_234_567);
    closeSync(fd);
    const corrupt = await collect(spawnCli(['verify', '--iso-mode', 'files', iso, loop.path]));
    expect(corrupt.code).toBe(1);
    expect(corrupt.stderr + corrupt.stdout).toContain(
      "1 of the ISO's files differ on the stick: /casper/filesystem.squashfs differs from the ISO's at byte 1234567.",
    );
  }, 120_000);

  it('a drive that is no installer stick is said to be one', async () => {
    const loop = createLoop({ size: 16 * MiB });
    assertTestTarget(loop.path);
    const run = await collect(spawnCli(['verify', '--iso-mode', 'files', iso, loop.path]));
    expect(run.code).toBe(1);
    expect(run.stderr + run.stdout).toContain(`${loop.path} is not an installer stick`);
  });
});
