import { execFileSync } from 'node:child_process';
import { closeSync, copyFileSync, openSync, readFileSync, readSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { constants, gunzipSync } from 'node:zlib';
import { beforeAll, expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { detectPartitionTable, PARTITION_TABLE_BYTES } from '../../../user/images/formats/partition-table.js';
import { flashCli, resultsOf, type CliRun } from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import { createLoop, digestFile, readBytes, scratchDir, type LoopDevice } from '../../support/loop-device.js';
import { osImage, sh } from '../../support/os-image.js';

const IMAGE_SIZE = 16 * MiB;

/** Flips every bit of one byte of `file`. */
function flipByte(file: string, offset: number): void {
  const fd = openSync(file, 'r+');
  const byte = Buffer.alloc(1);
  readSync(fd, byte, 0, 1, offset);
  writeSync(fd, Buffer.from([(byte[0] ?? 0) ^ 0xff]), 0, 1, offset);
  closeSync(fd);
}

/** A copy of `file` cut to `bytes`. */
function truncated(dir: string, file: string, bytes: number): string {
  const copy = join(dir, `cut-${file}`);
  copyFileSync(join(dir, file), copy);
  execFileSync('truncate', ['-s', String(bytes), copy]);
  return copy;
}

function corrupted(dir: string, file: string, offset: (size: number) => number): string {
  const copy = join(dir, `bad-${file}`);
  copyFileSync(join(dir, file), copy);
  flipByte(copy, offset(statSync(copy).size));
  return copy;
}

/** The offset of the first xz block's CRC64, its last 8 bytes, from xz's own listing. */
function firstXzCheck(file: string): number {
  const listing = execFileSync('xz', ['--robot', '-lvv', file], { encoding: 'utf8' });
  const block =
    listing
      .split('\n')
      .find((line) => line.startsWith('block\t'))
      ?.split('\t') ?? [];
  return Number(block[4]) + Number(block[6]) - 8;
}

describeDevices('sluice flash: bad input ends the job with its own reason, and the device incomplete', () => {
  let dir: string;
  let loop: LoopDevice;

  beforeAll(() => {
    dir = scratchDir();
    osImage(dir, IMAGE_SIZE);
    sh(
      dir,
      'gzip -c os.img > os.img.gz && xz -T2 --block-size=2MiB -c os.img > os.img.xz && zstd -q -c os.img > os.img.zst && bzip2 -c os.img > os.img.bz2 && zip -q os.zip os.img',
    );
    loop = createLoop({ size: IMAGE_SIZE + 4 * MiB, dir });
  });

  /**
   * Flashes `image`, expecting it to fail during the job with `code` and a message matching
   * `message`: exit 1, a failed result, and the partition table never written (the helper blanks
   * the head first and writes the image's own last, which a failed source must never reach).
   */
  async function expectSourceFailure(
    image: string,
    code: string | RegExp,
    message: RegExp,
    flags: string[] = [],
  ): Promise<CliRun> {
    sh(dir, `dd if=/dev/urandom of=${loop.backing} bs=1M count=${IMAGE_SIZE / MiB} conv=notrunc status=none`);
    const before = digestFile(loop.backing);
    const run = await flashCli(image, [loop.path], ['--no-eject', ...flags]);
    const result = resultsOf(run).get(loop.path);
    expect(result, run.stdout + run.stderr).toMatchObject({ status: 'failed' });
    expect(result?.code).toMatch(code);
    expect(result?.message).toMatch(message);
    // The result says what state the device is in: once image bytes arrived, its partition table
    // was blanked and the image partly written; with none, it is untouched and not said to be changed.
    if ((result?.bytes ?? 0) > 0)
      expect(result?.message).toMatch(/ The drive is incomplete; flash it again before use\.$/);
    else {
      expect(result?.message).not.toMatch(/incomplete;/);
      expect(digestFile(loop.backing)).toBe(before);
    }
    expect(run.code).toBe(1);
    expect(run.stdout).not.toMatch(/written and verified/);
    // The image's GPT is at 512; the device's random fill (or the helper's blanking) cannot hold one.
    expect(detectPartitionTable(readBytes(loop.backing, 0, PARTITION_TABLE_BYTES))).not.toBe('gpt');
    return run;
  }

  /** Expects the image to be refused before anything is written: the device keeps every byte. */
  async function expectRefused(image: string, exitCode: number, message: RegExp, flags: string[] = []): Promise<void> {
    const before = digestFile(loop.backing);
    const run = await flashCli(image, [loop.path], ['--no-eject', ...flags]);
    expect(run.code, run.stdout + run.stderr).toBe(exitCode);
    expect(run.stderr).toMatch(message);
    expect(run.events.filter((e) => e.type === 'result')).toEqual([]);
    expect(digestFile(loop.backing)).toBe(before);
  }

  it('gzip cut short: the exact decoded offset where it ends, the same every time', async () => {
    // A cut .gz ends in compressed data, which the probe reads as the trailer's size, a lower bound
    // of the image's (see gzipSizeHint). Cut where those bytes claim more than the file can decode
    // to, as about half of all cuts of a 2 MiB file do: such a "size" is known to be none, and
    // the image is written until the decoder finds the end. (With a plausible one it would be
    // refused as too large for a drive smaller than that claim.)
    const whole = readFileSync(join(dir, 'os.img.gz'));
    let length = 2 * MiB;
    while (whole.readUInt32LE(length - 4) <= (length - 18) * 1032) length -= 1;
    const cut = truncated(dir, 'os.img.gz', length);
    // What zlib can decode of the cut file, in one call: the image's good part.
    const decodable = gunzipSync(readFileSync(cut), { finishFlush: constants.Z_SYNC_FLUSH }).length;
    for (let run = 0; run < 2; run++) {
      const failed = await expectSourceFailure(
        cut,
        'source-truncated',
        new RegExp(`gzip data ends too early, at image byte ${decodable} \\(compressed byte \\d+\\)`),
      );
      expect(resultsOf(failed).get(loop.path)?.offset).toBe(decodable);
    }
  });

  it('a gzip whose data is bad from its first byte fails before a byte reaches the device: untouched, and not said to be incomplete', async () => {
    // A 10-byte gzip header, then a deflate block of the reserved type 3: nothing can be decoded.
    const bad = join(dir, 'bad-start.img.gz');
    writeFileSync(bad, Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]), Buffer.alloc(64, 0xff)]));
    const before = digestFile(loop.backing);
    const run = await flashCli(bad, [loop.path], ['--no-eject']);
    expect(run.code).toBe(1);
    const result = resultsOf(run).get(loop.path);
    expect(result, run.stdout + run.stderr).toMatchObject({ status: 'failed', code: 'source-corrupt', bytes: 0 });
    expect(result?.message).toMatch(/gzip data is corrupt at image byte 0/);
    expect(result?.message).not.toMatch(/incomplete/);
    expect(digestFile(loop.backing)).toBe(before);
  });

  for (const [name, compress] of [
    ['gz', 'gzip'],
    ['xz', 'xz'],
    ['zst', 'zstd -q'],
    ['bz2', 'bzip2'],
  ] as const) {
    it(`an empty .${name} (a valid archive of 0 bytes) is refused, and nothing is written`, async () => {
      sh(dir, `printf '' | ${compress} -c > empty.img.${name}`);
      const before = digestFile(loop.backing);
      const run = await flashCli(join(dir, `empty.img.${name}`), [loop.path], ['--no-eject']);
      expect(run.code, run.stdout + run.stderr).toBe(1);
      expect(run.stdout).not.toMatch(/"status":"ok"/);
      // Refused by the probe when the format records the size (xz, zstd), else by the writer when the stream ends.
      const said = resultsOf(run).get(loop.path)?.message ?? run.stderr;
      expect(said).toMatch(/empty.*0 bytes/);
      expect(said).not.toMatch(/incomplete/);
      expect(digestFile(loop.backing)).toBe(before);
    });
  }

  it('gzip whose CRC does not match', async () => {
    // The trailer is CRC-32, then the size: the mismatch shows only once everything was sent.
    await expectSourceFailure(
      corrupted(dir, 'os.img.gz', (size) => size - 8),
      'source-corrupt',
      /gzip data is corrupt .*incorrect data check/,
    );
  });

  for (const builtin of [false, true]) {
    const how = builtin ? ', Sluice’s own decoder' : ', system decoder';
    const flags = builtin ? ['--builtin-decoders'] : [];

    it(`xz with a block whose CRC64 does not match${how}`, async () => {
      const bad = corrupted(dir, 'os.img.xz', () => firstXzCheck(join(dir, 'os.img.xz')));
      await expectSourceFailure(bad, 'source-corrupt', /xz data (is corrupt|cannot be decoded)/, flags);
    });

    it(`zstd cut short${how}`, async () => {
      await expectSourceFailure(truncated(dir, 'os.img.zst', 1 * MiB), 'source-truncated', /zstd data ends/, flags);
    });

    it(`zstd with damaged data${how}`, async () => {
      await expectSourceFailure(
        corrupted(dir, 'os.img.zst', (size) => Math.floor(size / 2)),
        'source-corrupt',
        /zstd data is corrupt/,
        flags,
      );
    });

    it(`zip with damaged data${how}`, async () => {
      await expectSourceFailure(
        corrupted(dir, 'os.zip', (size) => Math.floor(size / 3)),
        'source-corrupt',
        /zip .*corrupt/,
        flags,
      );
    });
  }

  it('bzip2 cut short', async () => {
    // lbzip2 cannot tell a cut from damage ("bad block header magic"); bzip2 can.
    await expectSourceFailure(
      truncated(dir, 'os.img.bz2', 2 * MiB),
      /^source-(truncated|corrupt)$/,
      /bzip2 data (ends too early|is corrupt)\. \S*bzip2 says: /,
    );
  });

  it('bzip2 with damaged data', async () => {
    await expectSourceFailure(
      corrupted(dir, 'os.img.bz2', (size) => Math.floor(size / 2)),
      'source-corrupt',
      /bzip2 data is corrupt/,
    );
  });

  it('a raw image whose SHA-256 is not the one given', async () => {
    const run = await expectSourceFailure(
      join(dir, 'os.img'),
      'source-checksum-mismatch',
      /SHA-256 is [0-9a-f]{64}, but --sha256 says 0{63}1/,
      ['--sha256', `${'0'.repeat(63)}1`],
    );
    expect(run.events.find((e) => e.type === 'source')?.['decoder']).toMatch(
      /read directly, SHA-256 checked alongside/,
    );
  });

  it('an xz image whose SHA256SUMS entry does not match', async () => {
    writeFileSync(join(dir, 'SHA256SUMS'), `${'a'.repeat(64)}  os.img.xz\n${'b'.repeat(64)}  other.img\n`);
    try {
      await expectSourceFailure(join(dir, 'os.img.xz'), 'source-checksum-mismatch', /but SHA256SUMS says a{64}/);
    } finally {
      sh(dir, 'rm SHA256SUMS');
    }
  });

  it('a matching IMAGE.sha256 lets the flash through', async () => {
    sh(dir, 'sha256sum os.img.zst > os.img.zst.sha256');
    const run = await flashCli(join(dir, 'os.img.zst'), [loop.path], ['--no-eject']);
    expect(resultsOf(run).get(loop.path), run.stderr).toMatchObject({ status: 'ok' });
    expect(run.events.find((e) => e.type === 'source')?.['checksum']).toMatchObject({ from: 'os.img.zst.sha256' });
  });

  it('a raw image cut short, its last partition reaching past its end: refused untouched, written only with --allow-truncated', async () => {
    const cut = truncated(dir, 'os.img', 12 * MiB);
    await expectRefused(
      cut,
      1,
      /cut-os\.img is cut short: it ends at 12\.6 MB \(12582912 bytes\), but its partition 2 reaches to \d+\.\d MB \(\d+ bytes\)\..* To write it anyway, pass --allow-truncated\. Nothing was written\./,
    );
    const run = await flashCli(cut, [loop.path], ['--no-eject', '--exact', '--allow-truncated']);
    expect(resultsOf(run).get(loop.path), run.stdout + run.stderr).toMatchObject({ status: 'ok', bytes: 12 * MiB });
    expect(run.stderr).toMatch(/warning: cut-os\.img is cut short: .* Writing it anyway \(--allow-truncated\)\./);
  });

  it('xz cut short: its index is gone, so it is refused before writing', async () => {
    await expectRefused(truncated(dir, 'os.img.xz', 1 * MiB), 1, /xz file's index .* truncated/);
  });

  it('zip cut short: no central directory, refused before writing', async () => {
    await expectRefused(truncated(dir, 'os.zip', 1 * MiB), 1, /zip archive has no central directory .* truncated/);
  });

  it('a zip with no disk image inside', async () => {
    sh(dir, 'echo hello > notes.txt && zip -q notes.zip notes.txt');
    await expectRefused(join(dir, 'notes.zip'), 1, /notes\.zip holds no disk image .*notes\.txt/);
  });

  it('an encrypted zip: unsupported, exit 3', async () => {
    sh(dir, 'zip -q -P secret locked.zip os.img');
    await expectRefused(join(dir, 'locked.zip'), 3, /os\.img in locked\.zip is encrypted\. Sluice does not decrypt/);
  });

  it('bzip2 with Sluice’s own decoders only: unsupported, exit 3, before writing', async () => {
    await expectRefused(join(dir, 'os.img.bz2'), 3, /bzip2 image, and Sluice has no bzip2 decoder of its own/, [
      '--builtin-decoders',
    ]);
  });
});
