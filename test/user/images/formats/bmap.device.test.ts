import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { MiB } from '../../../../common/domain/units.js';
import { parseBmap, type BlockMap } from '../../../../user/images/formats/bmap.js';
import { detectPartitionTable, PARTITION_TABLE_BYTES } from '../../../../user/images/formats/partition-table.js';
import { flashCli, resultsOf } from '../../../support/cli.js';
import { describeDevices } from '../../../support/device-suite.js';
import { createLoop, digestFile, readBytes, scratchDir, type LoopDevice } from '../../../support/loop-device.js';
import { osImage, sh } from '../../../support/os-image.js';

const IMAGE_SIZE = 24 * MiB;

describeDevices('block maps (bmap): only mapped ranges are written and verified', () => {
  let dir: string;
  let image: string;
  let map: BlockMap;
  let loop: LoopDevice;

  beforeAll(() => {
    dir = scratchDir();
    image = osImage(dir, IMAGE_SIZE);
    // bmaptool, the reference: it maps the image file's allocated blocks (its holes are free space).
    execFileSync('bmaptool', ['create', '-o', `${image}.bmap`, image], { stdio: 'ignore' });
    map = parseBmap(readFileSync(`${image}.bmap`, 'utf8'), 'os.img.bmap');
    loop = createLoop({ size: IMAGE_SIZE + 4 * MiB, dir });
  });

  /** Fills the device with random bytes and returns them, to check afterwards what was left alone. */
  function garbage(): Buffer {
    sh(dir, `dd if=/dev/urandom of=${loop.backing} bs=1M count=${IMAGE_SIZE / MiB} conv=notrunc status=none`);
    return readBytes(loop.backing, 0, IMAGE_SIZE);
  }

  /** Every mapped range holds the image's bytes; every unmapped one still holds what was there before. */
  function expectMappedOnly(before: Buffer): void {
    const original = readFileSync(image);
    const device = readBytes(loop.backing, 0, IMAGE_SIZE);
    let end = 0;
    for (const { offset, length } of map.ranges) {
      expect(
        device.subarray(offset, offset + length).equals(original.subarray(offset, offset + length)),
        `mapped ${offset}+${length}`,
      ).toBe(true);
      expect(device.subarray(end, offset).equals(before.subarray(end, offset)), `unmapped ${end}-${offset}`).toBe(true);
      end = offset + length;
    }
    expect(device.subarray(end).equals(before.subarray(end))).toBe(true);
  }

  it('the test image has holes for the map to skip', () => {
    expect(map.ranges.length).toBeGreaterThan(2);
    expect(map.mappedBytes).toBeLessThan(IMAGE_SIZE * 0.8);
  });

  it('a raw image with IMAGE.bmap next to it: mapped ranges written and verified, garbage elsewhere left alone', async () => {
    const before = garbage();
    const run = await flashCli(image, [loop.path], ['--no-eject']);
    expect(resultsOf(run).get(loop.path), run.stdout + run.stderr).toMatchObject({
      status: 'ok',
      verified: true,
      bytes: map.mappedBytes,
    });
    expect(run.events.find((e) => e.type === 'source')?.['blockMap']).toMatchObject({
      mappedBytes: map.mappedBytes,
      ranges: map.ranges.length,
    });
    expectMappedOnly(before);
  });

  it('an .xz image with the .bmap of the uncompressed image (bmaptool’s naming)', async () => {
    sh(dir, 'xz -T2 -c os.img > os.img.xz');
    const before = garbage();
    const run = await flashCli(join(dir, 'os.img.xz'), [loop.path], ['--no-eject']);
    expect(resultsOf(run).get(loop.path), run.stdout + run.stderr).toMatchObject({
      status: 'ok',
      bytes: map.mappedBytes,
    });
    expectMappedOnly(before);
  });

  it('a zip with .meta/image.bmap inside', async () => {
    sh(
      dir,
      `mkdir -p zipped/.meta && cp --sparse=always os.img zipped/os.img && cp os.img.bmap zipped/.meta/image.bmap && cd zipped && zip -q -r ../with-bmap.zip os.img .meta`,
    );
    const before = garbage();
    const run = await flashCli(join(dir, 'with-bmap.zip'), [loop.path], ['--no-eject']);
    expect(resultsOf(run).get(loop.path), run.stdout + run.stderr).toMatchObject({
      status: 'ok',
      bytes: map.mappedBytes,
    });
    expect(String((run.events.find((e) => e.type === 'source')?.['blockMap'] as { from: string }).from)).toMatch(
      /\.meta\/image\.bmap$/,
    );
    expectMappedOnly(before);
  });

  it('an image byte that differs from its range’s checksum fails the flash at that range', async () => {
    const [, second] = map.ranges;
    if (second === undefined) throw new Error('the map needs two ranges');
    const damaged = join(dir, 'damaged.img');
    copyFileSync(image, damaged);
    const bytes = readFileSync(damaged);
    bytes[second.offset + 100] = (bytes[second.offset + 100] ?? 0) ^ 0xff;
    writeFileSync(damaged, bytes);
    garbage();
    const run = await flashCli(damaged, [loop.path], ['--no-eject', '--bmap', `${image}.bmap`]);
    expect(run.code).toBe(1);
    expect(resultsOf(run).get(loop.path)).toMatchObject({
      status: 'failed',
      code: 'source-checksum-mismatch',
      offset: second.offset,
    });
    expect(detectPartitionTable(readBytes(loop.backing, 0, PARTITION_TABLE_BYTES))).not.toBe('gpt');
  });

  it('--no-bmap ignores the map (only free space is left out); --exact writes the whole image', async () => {
    garbage();
    const run = await flashCli(image, [loop.path], ['--no-eject', '--no-bmap']);
    const result = resultsOf(run).get(loop.path);
    expect(result).toMatchObject({ status: 'ok', verified: true });
    expect(Number(result?.bytes) + Number(result?.skipped)).toBe(IMAGE_SIZE);
    const reasons = run.events.find((e) => e.type === 'result')?.['skippedFor'] as { reason: { kind: string } }[];
    expect(reasons.map((r) => r.reason.kind)).toEqual(['free-space', 'free-space']);
    garbage();
    const exact = await flashCli(image, [loop.path], ['--no-eject', '--exact']);
    expect(resultsOf(exact).get(loop.path)).toMatchObject({ status: 'ok', bytes: IMAGE_SIZE });
    expect(resultsOf(exact).get(loop.path)).not.toHaveProperty('skipped');
    expect(readBytes(loop.backing, 0, IMAGE_SIZE).equals(readFileSync(image))).toBe(true);
  });

  it('a bmap of another image: its range checksums fail, the partition table is not written', async () => {
    const other = osImage(dir, IMAGE_SIZE, 'other.img');
    garbage();
    const run = await flashCli(other, [loop.path], ['--no-eject', '--bmap', `${image}.bmap`]);
    expect(run.code).toBe(1);
    const result = resultsOf(run).get(loop.path);
    expect(result, run.stdout + run.stderr).toMatchObject({ status: 'failed', code: 'source-checksum-mismatch' });
    expect(result?.message).toMatch(
      /block map os\.img\.bmap does not match the image: bytes \d+-\d+ have a different SHA256/,
    );
    expect(detectPartitionTable(readBytes(loop.backing, 0, PARTITION_TABLE_BYTES))).not.toBe('gpt');
  });

  it('a bmap for an image of another size is refused before anything is written', async () => {
    sh(dir, `head -c ${IMAGE_SIZE - MiB} os.img > shorter.img`);
    const before = digestFile(loop.backing);
    const run = await flashCli(join(dir, 'shorter.img'), [loop.path], ['--no-eject', '--bmap', `${image}.bmap`]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /does not match the image: it maps an image of 25165824 bytes, but .*shorter\.img holds 24117248/,
    );
    expect(digestFile(loop.backing)).toBe(before);
  });

  it('a bmap edited after it was made fails its own checksum and is refused', async () => {
    const edited = readFileSync(`${image}.bmap`, 'utf8').replace(
      /(<Range[^>]*>\s*)(\d+)/,
      (_all, head: string, first: string) => `${head}${Number(first) + 1}`,
    );
    writeFileSync(join(dir, 'edited.bmap'), edited);
    const before = digestFile(loop.backing);
    const run = await flashCli(image, [loop.path], ['--no-eject', '--bmap', join(dir, 'edited.bmap')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/block map edited\.bmap is not valid: its own checksum does not match/);
    expect(digestFile(loop.backing)).toBe(before);
  });
});
