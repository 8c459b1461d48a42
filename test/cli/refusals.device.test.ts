import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { linuxPlatform } from '../../writer/platform/linux.js';
import { refuseTarget } from '../../writer/target-check.js';
import { startHelper } from '../../user/launcher/launch.js';
import { assertTestTarget, flashCli, resultsOf } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import {
  attachLoop,
  createLoop,
  digestFile,
  partitionedLoop,
  scratchDir,
  writeRandomFile,
} from '../support/loop-device.js';
import { builtHelper } from '../support/unprivileged.js';
import { rootDisk } from '../support/system-disk.js';
import { processesWithEnvironment } from '../support/processes.js';

/** Runs a flash that must be refused, and checks the code, the exit status and that nothing changed. */
async function expectRefused(target: string, backing: string, code: string, imageSize = 2 * MiB): Promise<string> {
  const dir = scratchDir();
  const image = join(dir, 'image.img');
  writeRandomFile(image, imageSize);
  const before = digestFile(backing);
  const run = await flashCli(image, [target]);
  expect(run.code).toBe(4);
  const result = resultsOf(run).get(target);
  expect(result).toMatchObject({ status: 'failed', code });
  // Nothing reached the device: a refusal never says it is incomplete.
  expect(result?.message).not.toMatch(/incomplete/);
  expect(digestFile(backing)).toBe(before);
  return result?.message ?? '';
}

describeDevices('targets the engine refuses before writing a byte', () => {
  it('a device smaller than the image', async () => {
    const loop = createLoop({ size: 1 * MiB });
    const message = await expectRefused(loop.path, loop.backing, 'target-too-small');
    expect(message).toContain('too small');
  });

  it('a device smaller than the size a .gz records in its trailer (a lower bound: gzip wraps it at 4 GiB)', async () => {
    const loop = createLoop({ size: 2 * MiB });
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 3 * MiB);
    execFileSync('gzip', ['-k', image]);
    const before = digestFile(loop.backing);
    // The decoder started while the image was probed (for a .gz) carries this mark in its environment.
    const mark = `SLUICE_TEST_MARK=${randomUUID()}`;
    const run = await flashCli(`${image}.gz`, [loop.path], [], { env: { SLUICE_TEST_MARK: mark.split('=')[1] ?? '' } });
    expect(run.code, run.stdout + run.stderr).toBe(4);
    // Refused before anything was decoded: the decoder started for it is gone with the command.
    expect(processesWithEnvironment(mark)).toEqual([]);
    expect(resultsOf(run).get(loop.path)).toMatchObject({
      status: 'failed',
      code: 'target-too-small',
      message: expect.stringMatching(/too small: the image needs at least 3\.1 MB \(3145728 bytes\)/) as unknown,
    });
    expect(digestFile(loop.backing)).toBe(before);
  });

  it('a regular file handed to the privileged writer itself (the CLI writes files on its own, as the user)', async () => {
    const dir = scratchDir();
    const file = join(dir, 'not-a-disk.img');
    writeRandomFile(file, 4 * MiB);
    const image = join(dir, 'image.img');
    writeRandomFile(image, 2 * MiB);
    const before = digestFile(file);
    assertTestTarget(file);
    const fd = openSync(image, 'r');
    try {
      const job = startHelper({
        source: fd,
        job: { kind: 'flash', targets: [file], imageSize: 2 * MiB, sourceSeekable: true, verify: true },
        program: builtHelper(),
      });
      expect(await job.result).toEqual([
        expect.objectContaining({
          status: 'failed',
          code: 'target-not-block-device',
          message: expect.stringContaining('not a disk') as unknown,
        }),
      ]);
    } finally {
      closeSync(fd);
    }
    expect(digestFile(file)).toBe(before);
  });

  it('a partition rather than the whole disk', async () => {
    const loop = await partitionedLoop('label: dos\nstart=2048, size=8192, type=83\nstart=10240, type=c\n');
    const message = await expectRefused(`${loop.path}p1`, loop.backing, 'target-is-partition', 1 * MiB);
    expect(message).toContain('partition');
  });

  it('a read-only device', async () => {
    const dir = scratchDir();
    const backing = join(dir, 'locked.img');
    writeRandomFile(backing, 8 * MiB);
    const loop = attachLoop(backing, { readOnly: true });
    expect(await expectRefused(loop.path, backing, 'target-read-only')).toContain('read-only');
  });

  it('this machine’s own system disk, asking only the check (nothing that could open it for writing)', async () => {
    const facts = await linuxPlatform.inspect(rootDisk());
    expect(facts.isSystem).toBe(true);
    expect(refuseTarget(facts, 1 * MiB, null)).toMatchObject({ code: 'target-system' });
  });
});
