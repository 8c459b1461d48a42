import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { GiB, MiB } from '../../common/domain/units.js';
import { assertTestTarget, collect, spawnCli } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { BOOT_MARKER, bootUnderOvmf, windowsBigIso, wimInfo } from '../support/installer-fixtures.js';
import { createLoop, scratchDir, waitForPath } from '../support/loop-device.js';
import { sh } from '../support/os-image.js';

const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1);

describeDevices('installer mode: a Windows-like UDF ISO whose install.wim is over 4 GiB', () => {
  let iso: string;
  beforeAll(() => {
    const started = performance.now();
    iso = windowsBigIso();
    console.log(`fixture ready in ${seconds(started)} s`);
  }, 1_800_000);

  it('the WIM is split into checked .swm parts, every other file is identical, and OVMF boots the loader', async () => {
    const dir = scratchDir('/var/tmp');
    const loop = createLoop({ size: 6 * GiB, fill: 'sparse', dir });
    assertTestTarget(loop.path);
    let started = performance.now();
    const run = await collect(
      spawnCli(['flash', '--yes', '--iso-mode', 'files', iso, loop.path], { env: { TMPDIR: dir } }),
    );
    console.log(`flashed (copied out, split, checked, written, read back) in ${seconds(started)} s`);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    const head = Buffer.alloc(512);
    const fd = openSync(loop.backing, 'r');
    readSync(fd, head, 0, 512, 0);
    closeSync(fd);
    expect([head[446], head[450], head.readUInt32LE(454)]).toEqual([0x80, 0x0c, (4 * MiB) / 512]);
    started = performance.now();
    const verify = await collect(spawnCli(['verify', '--iso-mode', 'files', iso, loop.path], { env: { TMPDIR: dir } }));
    console.log(`sluice verify --iso-mode files in ${seconds(started)} s`);
    expect(verify.code, verify.stderr + verify.stdout).toBe(0);
    expect(verify.stdout).toMatch(/every file of .* \(6 files, .*\) is on the stick, identical\.\n$/);
    started = performance.now();
    // The partition is read in place, through its loop partition, not copied out first.
    execFileSync('partx', ['--update', loop.path]);
    await waitForPath(`${loop.path}p1`);
    sh(dir, `fsck.fat -n ${loop.path}p1 >/dev/null && mkdir stick && mcopy -s -n -i ${loop.path}p1 ::/ stick/`);
    console.log(`fsck and copied out in ${seconds(started)} s`);
    const tree = join(iso, '..', 'tree');
    sh(dir, `ls stick/sources > parts.txt && diff -r -x 'install*.swm' stick ${tree}`);
    expect(readFileSync(join(dir, 'parts.txt'), 'utf8')).toBe('install.swm\ninstall2.swm\n');
    execFileSync('wimlib-imagex', [
      'verify',
      join(dir, 'stick/sources/install.swm'),
      `--ref=${join(dir, 'stick/sources/install*.swm')}`,
    ]);
    const original = readFileSync(join(iso, '..', 'install.wim.info'), 'utf8');
    expect(original).toMatch(/^Image Count: 2\n/);
    expect(wimInfo(join(dir, 'stick/sources/install.swm'))).toBe(original);
    sh(dir, 'rm -rf stick');
    const boot = bootUnderOvmf(loop.backing, dir);
    console.log(`booted to the loader in ${boot.seconds.toFixed(1)} s`);
    expect(boot.output).toContain(BOOT_MARKER);
  }, 1_800_000);
});
