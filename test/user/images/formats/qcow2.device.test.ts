import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { MiB } from '../../../../common/domain/units.js';
import { detectPartitionTable, PARTITION_TABLE_BYTES } from '../../../../user/images/formats/partition-table.js';
import { flashCli, resultsOf } from '../../../support/cli.js';
import { describeDevices } from '../../../support/device-suite.js';
import { createLoop, digestFile, readBytes, scratchDir, type LoopDevice } from '../../../support/loop-device.js';
import { osImage, sh } from '../../../support/os-image.js';

const IMAGE_SIZE = 24 * MiB;

describeDevices(
  'qcow2 images: every guest byte written and verified, unallocated clusters as the zeros they read as',
  () => {
    let dir: string;
    let raw: Buffer;
    let loop: LoopDevice;

    beforeAll(() => {
      dir = scratchDir();
      osImage(dir, IMAGE_SIZE);
      raw = readFileSync(join(dir, 'os.img'));
      sh(
        dir,
        [
          'qemu-img convert -O qcow2 os.img plain.qcow2',
          'qemu-img convert -O qcow2 -o compat=0.10 os.img v2.qcow2',
          'qemu-img convert -c -O qcow2 os.img zlib.qcow2',
          'qemu-img convert -c -O qcow2 -o compression_type=zstd os.img zstd.qcow2',
          // Zero clusters (v3's "reads as zeros" flag) in the middle of the root filesystem.
          'cp plain.qcow2 zeroed.qcow2 && qemu-io -f qcow2 -c "write -z 12M 1M" zeroed.qcow2',
        ].join(' && '),
      );
      loop = createLoop({ size: IMAGE_SIZE + 4 * MiB, dir });
    });

    /** Fills the drive with random bytes, as a used card holds. */
    function garbage(): void {
      sh(dir, `dd if=/dev/urandom of=${loop.backing} bs=1M count=${IMAGE_SIZE / MiB} conv=notrunc status=none`);
    }

    for (const name of ['plain', 'v2', 'zlib', 'zstd', 'zeroed']) {
      it(`${name}.qcow2 --exact onto a used drive: the drive equals the image`, async () => {
        const image = join(dir, `${name}.qcow2`);
        garbage();
        const run = await flashCli(image, [loop.path], ['--no-eject', '--exact']);
        expect(run.code, run.stdout + run.stderr).toBe(0);
        expect(resultsOf(run).get(loop.path)).toMatchObject({ status: 'ok', verified: true, bytes: IMAGE_SIZE });
        expect(run.events.find((e) => e.type === 'source')).toMatchObject({
          format: 'qcow2',
          size: IMAGE_SIZE,
          sizeExact: true,
          blockMap: null,
        });
        const expected =
          name === 'zeroed'
            ? Buffer.concat([raw.subarray(0, 12 * MiB), Buffer.alloc(MiB), raw.subarray(13 * MiB)])
            : raw;
        // qemu's own reading of the image agrees with what the drive holds.
        sh(dir, `qemu-img convert -O raw ${name}.qcow2 ${name}.qemu.img`);
        expect(readFileSync(join(dir, `${name}.qemu.img`)).equals(expected)).toBe(true);
        expect(readBytes(loop.backing, 0, IMAGE_SIZE).equals(expected)).toBe(true);
      });
    }

    it('a qcow2 with a backing file is refused, naming it, before anything is written', async () => {
      sh(dir, 'qemu-img create -q -f qcow2 -b plain.qcow2 -F qcow2 overlay.qcow2');
      const before = digestFile(loop.backing);
      const run = await flashCli(join(dir, 'overlay.qcow2'), [loop.path], ['--no-eject']);
      expect(run.code).toBe(3);
      expect(run.stderr).toMatch(/overlay\.qcow2 is a qcow2 image that depends on a backing file \(plain\.qcow2\)/);
      expect(digestFile(loop.backing)).toBe(before);
    });

    it('a compressed cluster that does not decompress fails the flash at its guest offset', async () => {
      const image = join(dir, 'broken.qcow2');
      sh(dir, 'cp zlib.qcow2 broken.qcow2');
      // The first guest cluster holds the partition table. Follow the header's L1 table (offset at
      // byte 40) to its L2 table and its entry: a compressed cluster's file offset is in its low 54
      // bits (64 KiB clusters). Then damage its deflate data.
      const header = readBytes(image, 0, 48);
      const l2 = Number(
        readBytes(image, Number(header.readBigUInt64BE(40)), 8).readBigUInt64BE(0) & 0x00fffffffffffe00n,
      );
      const entry = readBytes(image, l2, 8).readBigUInt64BE(0);
      expect(entry & (1n << 62n)).not.toBe(0n);
      const fd = openSync(image, 'r+');
      writeSync(fd, Buffer.alloc(8, 0xff), 0, 8, Number(entry & ((1n << 54n) - 1n)) + 2);
      closeSync(fd);
      garbage();
      const run = await flashCli(image, [loop.path], ['--no-eject']);
      expect(run.code).toBe(1);
      expect(resultsOf(run).get(loop.path)).toMatchObject({ status: 'failed', code: 'source-corrupt', offset: 0 });
      expect(resultsOf(run).get(loop.path)?.message).toMatch(
        /compressed cluster at guest byte 0 \(file byte \d+\) does not decompress/,
      );
      expect(detectPartitionTable(readBytes(loop.backing, 0, PARTITION_TABLE_BYTES))).not.toBe('gpt');
    });

    it('a qcow2 cut short is refused or fails, never reported as written', async () => {
      sh(dir, 'head -c $(($(stat -c %s plain.qcow2) / 2)) plain.qcow2 > cut.qcow2');
      const run = await flashCli(join(dir, 'cut.qcow2'), [loop.path], ['--no-eject']);
      expect(run.code).toBe(1);
      expect(resultsOf(run).get(loop.path)).toMatchObject({ status: 'failed', code: 'source-truncated' });
      expect(resultsOf(run).get(loop.path)?.message).toMatch(
        /qcow2 image ends at byte \d+, but its tables point to byte \d+: it is truncated/,
      );
    });
  },
);
