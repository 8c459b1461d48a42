import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { flashCli, resultsOf, verifyCli } from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import { createLoop, readBytes, scratchDir, type LoopDevice } from '../../support/loop-device.js';
import { osImage, sh } from '../../support/os-image.js';

const IMAGE_SIZE = 24 * MiB;

/** One way an image arrives: how the test makes it with the reference tool, and what must decode it. */
interface Case {
  name: string;
  /** Shell commands run in the scratch directory, from os.img; they make `file`. */
  make: string;
  file: string;
  /** The decoder the source event must name, with and without --builtin-decoders. */
  system: RegExp;
  builtin: RegExp;
  /** What the probe knows of the size: the format records it, gives a hint (gzip), or not at all (zstd from a pipe). */
  size?: 'hint' | 'unknown';
}

const CASES: Case[] = [
  {
    name: 'gzip',
    make: 'gzip -6 -c os.img > os.img.gz',
    file: 'os.img.gz',
    system: /node:zlib gunzip/,
    builtin: /node:zlib gunzip/,
    size: 'hint',
  },
  {
    name: 'gzip, several members (pigz, split archives)',
    make: 'head -c 5000000 os.img | gzip -c > multi.img.gz && tail -c +5000001 os.img | gzip -1 -c >> multi.img.gz',
    file: 'multi.img.gz',
    system: /gunzip/,
    builtin: /gunzip/,
    size: 'hint',
  },
  {
    name: 'xz, one block',
    make: 'xz -6 -T1 -c os.img > os.img.xz',
    file: 'os.img.xz',
    system: /^xz -dc -T\d+ .*\(system\)$/,
    builtin: /xz-decompress/,
  },
  {
    name: 'xz, many blocks (xz -T, as Raspberry Pi OS ships)',
    make: 'xz -6 -T2 --block-size=3MiB -c os.img > blocks.img.xz',
    file: 'blocks.img.xz',
    system: /^xz -dc -T\d+/,
    builtin: /xz-decompress/,
  },
  {
    name: 'xz, two streams and stream padding',
    make: 'head -c 7000000 os.img | xz -c > streams.img.xz && tail -c +7000001 os.img | xz -c >> streams.img.xz && printf "\\0\\0\\0\\0" >> streams.img.xz',
    file: 'streams.img.xz',
    system: /^xz/,
    builtin: /xz-decompress/,
  },
  {
    name: 'zstd',
    make: 'zstd -q -3 -c os.img > os.img.zst',
    file: 'os.img.zst',
    system: /^zstd -dc/,
    builtin: /zstd, frame by frame/,
  },
  {
    name: 'zstd, several frames and a skippable frame',
    // A skippable frame: magic 0x184D2A50, a 4-byte length, that many bytes of user data (octal
    // escapes: dash's printf has no \x).
    make: 'head -c 6000000 os.img | zstd -q -c > frames.img.zst && printf "\\120\\052\\115\\030\\004\\000\\000\\000seek" >> frames.img.zst && tail -c +6000001 os.img | zstd -q -c >> frames.img.zst',
    file: 'frames.img.zst',
    system: /^zstd/,
    builtin: /frame by frame/,
    size: 'unknown',
  },
  {
    name: 'zip, deflated',
    make: 'zip -q -6 os.zip os.img',
    file: 'os.zip',
    system: /inflateRaw/,
    builtin: /inflateRaw/,
  },
  { name: 'zip, stored', make: 'zip -q -0 stored.zip os.img', file: 'stored.zip', system: /stored/, builtin: /stored/ },
  {
    name: 'zip64',
    make: 'zip -q -fz zip64.zip os.img',
    file: 'zip64.zip',
    system: /inflateRaw/,
    builtin: /inflateRaw/,
  },
];

function digest(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

describeDevices('sluice flash --exact: every format, to a real device, byte for byte', () => {
  let dir: string;
  let image: string;
  let original: string;
  let loop: LoopDevice;

  beforeAll(() => {
    dir = scratchDir();
    image = osImage(dir, IMAGE_SIZE);
    original = digest(readFileSync(image));
    for (const c of CASES) sh(dir, c.make);
    loop = createLoop({ size: IMAGE_SIZE + 8 * MiB, dir });
  });

  for (const c of CASES) {
    for (const builtin of [false, true]) {
      it(`${c.name}${builtin ? ', with Sluice’s own decoders' : ''}`, async () => {
        // Garbage first, so a device that merely kept an earlier run's bytes cannot pass.
        sh(dir, `dd if=/dev/urandom of=${loop.backing} bs=1M count=${IMAGE_SIZE / MiB} conv=notrunc status=none`);
        const run = await flashCli(
          join(dir, c.file),
          [loop.path],
          ['--no-eject', '--exact', ...(builtin ? ['--builtin-decoders'] : [])],
        );
        expect(resultsOf(run).get(loop.path), run.stdout + run.stderr).toMatchObject({
          status: 'ok',
          verified: true,
          bytes: IMAGE_SIZE,
        });
        expect(run.code).toBe(0);
        const source = run.events.find((e) => e.type === 'source');
        expect(source?.['decoder']).toMatch(builtin ? c.builtin : c.system);
        // gzip records only the last member's size (modulo 4 GiB): a hint, and said to be one.
        expect(source?.['sizeExact']).toBe(c.size === undefined);
        if (c.size === undefined) expect(source?.['size']).toBe(IMAGE_SIZE);
        if (c.size === 'unknown') expect(source?.['size']).toBeNull();
        expect(digest(readBytes(loop.backing, 0, IMAGE_SIZE))).toBe(original);
      });
    }
  }

  it('sluice verify decodes a compressed image to compare it under the flash’s rule, finds a changed byte, and --exact compares the free space too', async () => {
    sh(dir, `dd if=/dev/urandom of=${loop.backing} bs=1M count=${IMAGE_SIZE / MiB} conv=notrunc status=none`);
    const flashed = resultsOf(await flashCli(join(dir, 'blocks.img.xz'), [loop.path], ['--no-eject'])).get(loop.path);
    expect(flashed).toMatchObject({ status: 'ok', verified: true });
    const verified = await verifyCli(join(dir, 'blocks.img.xz'), loop.path);
    // The same ranges left out as the flash left out, and said why.
    expect(resultsOf(verified).get(loop.path)).toMatchObject({
      status: 'ok',
      bytes: flashed?.bytes,
      skipped: flashed?.skipped,
    });
    expect(verified.events.find((e) => e.type === 'result')?.['skippedFor']).toEqual([
      { reason: { kind: 'free-space', partition: 1, label: 'BOOT', filesystem: 'FAT12' }, bytes: expect.any(Number) },
      { reason: { kind: 'free-space', partition: 2, label: 'rootfs', filesystem: 'ext4' }, bytes: expect.any(Number) },
    ]);
    // The used card's bytes are still in the free space: compared whole, the drive differs.
    expect(
      resultsOf(await verifyCli(join(dir, 'blocks.img.xz'), loop.path, {}, ['--exact'])).get(loop.path),
    ).toMatchObject({ status: 'failed', code: 'verify-mismatch' });
    // A byte of the kernel file on the boot partition (its first clusters start a few KiB past 1 MiB).
    const at = 2 * MiB + 3;
    const changed = Buffer.from([(readBytes(loop.backing, at, 1)[0] ?? 0) ^ 0xff]);
    const fd = openSync(loop.backing, 'r+');
    writeSync(fd, changed, 0, 1, at);
    closeSync(fd);
    expect(resultsOf(await verifyCli(join(dir, 'blocks.img.xz'), loop.path)).get(loop.path)).toMatchObject({
      status: 'failed',
      code: 'verify-mismatch',
      offset: at,
    });
  });

  it('bzip2, with the system’s decoder', async () => {
    sh(dir, 'bzip2 -9 -c os.img > os.img.bz2');
    const run = await flashCli(join(dir, 'os.img.bz2'), [loop.path], ['--no-eject', '--exact']);
    expect(resultsOf(run).get(loop.path), run.stderr).toMatchObject({
      status: 'ok',
      verified: true,
      bytes: IMAGE_SIZE,
    });
    expect(run.events.find((e) => e.type === 'source')?.['decoder']).toMatch(/bzip2 -dc/);
    expect(digest(readBytes(loop.backing, 0, IMAGE_SIZE))).toBe(original);
  });

  it('picks the largest image in a zip with several, says which, and skips the rest', async () => {
    writeFileSync(join(dir, 'README.txt'), 'Flash the .img file.\n');
    sh(dir, 'head -c 1048576 os.img > recovery.img && zip -q several.zip README.txt recovery.img os.img');
    const run = await flashCli(join(dir, 'several.zip'), [loop.path], ['--no-eject', '--exact']);
    expect(resultsOf(run).get(loop.path), run.stderr).toMatchObject({ status: 'ok', bytes: IMAGE_SIZE });
    const source = run.events.find((e) => e.type === 'source');
    expect(source?.['entry']).toMatchObject({ name: 'os.img' });
    expect(String((source?.['entry'] as { choice: string }).choice)).toContain('largest of 2');
    expect(digest(readBytes(loop.backing, 0, IMAGE_SIZE))).toBe(original);
  });
});
