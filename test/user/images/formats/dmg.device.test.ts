import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { MiB } from '../../../../common/domain/units.js';
import { detectPartitionTable, PARTITION_TABLE_BYTES } from '../../../../user/images/formats/partition-table.js';
import { flashCli, resultsOf } from '../../../support/cli.js';
import { describeDevices } from '../../../support/device-suite.js';
import { createLoop, digestFile, readBytes, scratchDir, type LoopDevice } from '../../../support/loop-device.js';
import { osImage, sh } from '../../../support/os-image.js';
import { writeDmg } from '../../../support/udif.js';

const IMAGE_SIZE = 16 * MiB;

describeDevices('dmg (Apple UDIF) images', () => {
  let dir: string;
  let raw: Buffer;
  let loop: LoopDevice;

  beforeAll(() => {
    dir = scratchDir();
    raw = readFileSync(osImage(dir, IMAGE_SIZE));
    writeDmg(raw, join(dir, 'os.dmg'));
    loop = createLoop({ size: IMAGE_SIZE + 4 * MiB, dir });
  });

  function garbage(): void {
    sh(dir, `dd if=/dev/urandom of=${loop.backing} bs=1M count=${IMAGE_SIZE / MiB} conv=notrunc status=none`);
  }

  function damaged(name: string, offset: number): string {
    const path = join(dir, name);
    sh(dir, `cp os.dmg ${name}`);
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(16, 0x5a), 0, 16, offset);
    closeSync(fd);
    return path;
  }

  it('raw, zero-fill and zlib blocks, --exact: written and verified byte for byte, size exact from the block table', async () => {
    garbage();
    const run = await flashCli(join(dir, 'os.dmg'), [loop.path], ['--no-eject', '--exact']);
    expect(resultsOf(run).get(loop.path), run.stdout + run.stderr).toMatchObject({
      status: 'ok',
      verified: true,
      bytes: IMAGE_SIZE,
    });
    expect(run.events.find((e) => e.type === 'source')).toMatchObject({
      format: 'dmg',
      size: IMAGE_SIZE,
      sizeExact: true,
      decoder: '@balena/udif',
    });
    expect(readBytes(loop.backing, 0, IMAGE_SIZE).equals(raw)).toBe(true);
  });

  it('a damaged raw block, which only the CRC-32 can catch, fails the flash', async () => {
    garbage();
    // The first MiB is stored raw at the start of the data fork; byte 600 is inside the GPT header.
    const run = await flashCli(damaged('raw-damaged.dmg', 600), [loop.path], ['--no-eject']);
    expect(run.code).toBe(1);
    expect(resultsOf(run).get(loop.path)).toMatchObject({ status: 'failed', code: 'source-corrupt' });
    expect(resultsOf(run).get(loop.path)?.message).toMatch(
      /dmg raw-damaged\.dmg is corrupt: its data does not match the CRC-32 it records/,
    );
    expect(detectPartitionTable(readBytes(loop.backing, 0, PARTITION_TABLE_BYTES))).not.toBe('gpt');
  });

  it('a damaged zlib block fails the flash', async () => {
    garbage();
    const run = await flashCli(damaged('zlib-damaged.dmg', MiB + 100), [loop.path], ['--no-eject']);
    expect(run.code).toBe(1);
    expect(resultsOf(run).get(loop.path)).toMatchObject({ status: 'failed', code: 'source-corrupt' });
    expect(resultsOf(run).get(loop.path)?.message).toMatch(/dmg zlib-damaged\.dmg is corrupt/);
  });

  it('an LZFSE dmg is refused as unsupported before anything is written', async () => {
    writeDmg(raw, join(dir, 'lzfse.dmg'), { lzfse: true });
    const before = digestFile(loop.backing);
    const run = await flashCli(join(dir, 'lzfse.dmg'), [loop.path], ['--no-eject']);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(
      /lzfse\.dmg is a dmg compressed with LZFSE \(ULFO\), which Sluice cannot decode\. Convert it first/,
    );
    expect(digestFile(loop.backing)).toBe(before);
  });
});
