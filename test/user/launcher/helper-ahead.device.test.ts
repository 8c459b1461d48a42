/**
 * A helper started ahead of its job (startHelperAhead), as `sluice flash` starts one while its image
 * is probed: it waits without touching the drive, then runs the job it is given, or exits when
 * abandoned. The real helper, on loop devices.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { HelperJob } from '../../../common/contracts/helper-protocol.js';
import { MiB } from '../../../common/domain/units.js';
import { startHelperAhead } from '../../../user/launcher/launch.js';
import { assertTestTarget, flashCli, resultsOf } from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import { createLoop, digestFile, readBytes, scratchDir, writeRandomFile } from '../../support/loop-device.js';
import { findDescendants, isDecoder, isHelper, waitForDescendant, waitForExit } from '../../support/processes.js';
import { builtHelper } from '../../support/unprivileged.js';
import { SD_CARD_BYTES_PER_SECOND, throttledGroup } from '../../support/throttle.js';

const IMAGE_BYTES = 6 * MiB + 512;

/** An image of random bytes named `name`, and a loop device twice its size (the test's own). */
function imageAndDrive(
  name = 'image.img',
  bytes = IMAGE_BYTES,
): { image: string; loop: ReturnType<typeof createLoop> } {
  const dir = scratchDir();
  const image = join(dir, name);
  writeRandomFile(image, bytes);
  const loop = createLoop({ size: 2 * Math.ceil(bytes / MiB) * MiB, dir });
  assertTestTarget(loop.path);
  return { image, loop };
}

function flashJob(target: string): HelperJob {
  return { kind: 'flash', targets: [target], imageSize: IMAGE_BYTES, sourceSeekable: true, verify: true };
}

/** The probe process, as `sluice flash` starts it. */
function isProbe(argv: string[]): boolean {
  return argv[0] === process.execPath && argv.some((a) => a.endsWith('out/run/probe.js'));
}

describeDevices('a helper started ahead of its job', () => {
  it('waits without touching the drive, then runs the job it is given', async () => {
    const { image, loop } = imageAndDrive();
    const before = digestFile(loop.backing);
    const fd = openSync(image, 'r');
    try {
      // Started with only the job's kind and drive: the size and the rest come later.
      const ahead = startHelperAhead({
        source: fd,
        job: { kind: 'flash', targets: [loop.path], imageSize: null, sourceSeekable: true, verify: true },
        program: builtHelper(),
      });
      await waitForDescendant(process.pid, isHelper);
      // Long enough for it to start, open its channel and say it is ready (about 100 ms here).
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(digestFile(loop.backing)).toBe(before);
      const [result] = await ahead.run(flashJob(loop.path)).result;
      expect(result).toMatchObject({ status: 'ok', target: loop.path, bytes: IMAGE_BYTES });
      expect(readBytes(loop.backing, 0, IMAGE_BYTES).equals(readFileSync(image))).toBe(true);
    } finally {
      closeSync(fd);
    }
  });

  it('exits when abandoned, and the drive is as it was', async () => {
    const { image, loop } = imageAndDrive();
    const before = digestFile(loop.backing);
    const fd = openSync(image, 'r');
    try {
      const ahead = startHelperAhead({ source: fd, job: flashJob(loop.path), program: builtHelper() });
      const pid = await waitForDescendant(process.pid, isHelper);
      ahead.abandon();
      await waitForExit(pid, 5000);
      expect(digestFile(loop.backing)).toBe(before);
    } finally {
      closeSync(fd);
    }
  });

  it('refuses a job for another drive than it was started for, and stops when abandoned', async () => {
    const { image, loop } = imageAndDrive();
    const other = createLoop({ size: 16 * MiB });
    assertTestTarget(other.path);
    const fd = openSync(image, 'r');
    try {
      const ahead = startHelperAhead({ source: fd, job: flashJob(loop.path), program: builtHelper() });
      const pid = await waitForDescendant(process.pid, isHelper);
      expect(() => ahead.run(flashJob(other.path))).toThrow(/another flash job/);
      ahead.abandon();
      await waitForExit(pid, 5000);
    } finally {
      closeSync(fd);
    }
  });

  it('sluice flash (as root) starts its helper, and for a compressed image its decoder, while the image is probed', async () => {
    for (const compressed of [false, true]) {
      const { image, loop } = imageAndDrive();
      const source = compressed ? `${image}.gz` : image;
      // gzip keeps the raw image beside the .gz, to compare with.
      if (compressed) execFileSync('gzip', ['--keep', '--fast', image]);
      // Every 2 ms, which of the three run side by side under the test's process.
      const seen = new Set<string>();
      const timer = setInterval(() => {
        const probe = findDescendants(process.pid, isProbe).length > 0;
        if (probe && findDescendants(process.pid, isHelper).length > 0) seen.add('helper');
        if (probe && findDescendants(process.pid, isDecoder).length > 0) seen.add('decoder');
      }, 2);
      const run = await flashCli(source, [loop.path]).finally(() => clearInterval(timer));
      expect(run.code, run.stderr).toBe(0);
      expect(resultsOf(run).get(loop.path)).toMatchObject({ status: 'ok' });
      expect(readBytes(loop.backing, 0, IMAGE_BYTES).equals(readFileSync(image))).toBe(true);
      expect([...seen].sort()).toEqual(compressed ? ['decoder', 'helper'] : ['helper']);
    }
  });

  it('a guess that proves wrong (a raw image named .gz): the helper started ahead exits once the image is examined, and another writes', async () => {
    const { image, loop } = imageAndDrive('raw.img.gz', 16 * MiB);
    // 16 MiB at 20 MB/s: the writing takes most of a second, time to see who is still there.
    const group = throttledGroup(loop.path, SD_CARD_BYTES_PER_SECOND);
    try {
      const lastSeen = new Map<number, number>();
      const timer = setInterval(() => {
        for (const pid of findDescendants(process.pid, isHelper)) lastSeen.set(pid, performance.now());
      }, 5);
      const run = await flashCli(image, [loop.path], [], { cgroup: group.dir }).finally(() => clearInterval(timer));
      const ended = performance.now();
      expect(run.code, run.stderr).toBe(0);
      expect(readBytes(loop.backing, 0, 16 * MiB).equals(readFileSync(image))).toBe(true);
      // The first, fed by a decoder that never ran, is stopped as soon as the feed reads the file itself,
      // not kept beside the writing one until the end.
      const [ahead, writer] = [...lastSeen.entries()];
      expect(writer, 'two helpers').toBeDefined();
      expect(ended - (ahead?.[1] ?? ended)).toBeGreaterThan(400);
    } finally {
      group.remove();
    }
  });

  it('an image that is a FIFO nobody writes: refused at once as one, neither the command nor its probe waits for a writer', async () => {
    const dir = scratchDir();
    const fifo = join(dir, 'image.img');
    execFileSync('mkfifo', [fifo]);
    const loop = createLoop({ size: 16 * MiB, dir });
    const before = digestFile(loop.backing);
    const started = performance.now();
    // Before, the probe waited for a writer until its 30 s limit.
    const run = await Promise.race([
      flashCli(fifo, [loop.path]),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000)),
    ]);
    expect(run, 'sluice flash still waiting after 20 s').not.toBeNull();
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(run?.stderr).toMatch(/image\.img is a FIFO, not an image file/);
    expect(run?.code).toBe(1);
    expect(digestFile(loop.backing)).toBe(before);
  });
});
