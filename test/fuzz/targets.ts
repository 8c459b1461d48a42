/**
 * The fuzz targets: every parser that reads bytes Sluice did not write, each with seeds made by
 * the format's own reference tool and the errors it is allowed to end with. Anything else it
 * throws, more than FUZZ_INPUT_MS on one input, or the process outgrowing its memory cap, is a
 * finding (campaign.ts).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import { ToHelper } from '../../common/contracts/helper-protocol.js';
import { JobError } from '../../common/domain/failure.js';
import { MiB } from '../../common/domain/units.js';
import { encodeFrame, FrameError, FrameReader } from '../../node/framing.js';
import { parseBmap } from '../../user/images/bmap.js';
import { checksumFor } from '../../user/images/checksums.js';
import { parseFrameHeader } from '../../user/images/decode/zstd-frames.js';
import { detectFormat } from '../../user/images/detect-format.js';
import { dmgSize, openDmg } from '../../user/images/dmg.js';
import { filesystemLabel, readPartitionTable } from '../../user/images/partition-table.js';
import { readQcow2 } from '../../user/images/qcow2.js';
import { readXzIndex, type ReadAt } from '../../user/images/xz-index.js';
import { entryPlan, readSmallEntry, readZipArchive } from '../../user/images/zip-directory.js';
import { readZstdSize } from '../../user/images/zstd-size.js';
import { osImage, sh } from '../support/os-image.js';
import { writeDmg } from '../support/udif.js';

export interface FuzzTarget {
  name: string;
  /** Real inputs to mutate, made in `dir` by the format's reference tool. */
  seeds(dir: string): Buffer[];
  /** Parses one input; resolves or throws. */
  run(input: Buffer, dir: string): Promise<unknown>;
  /** The errors this parser documents: anything else it throws is a finding. */
  documented(error: unknown): boolean;
}

const isJobError = (error: unknown): boolean => error instanceof JobError;

function readerOf(bytes: Buffer): ReadAt {
  return (position, length) => Promise.resolve(Buffer.from(bytes.subarray(Math.max(0, position), Math.max(0, Math.min(bytes.length, position + length)))));
}

/** A 16 MiB OS-like image (GPT, FAT boot, ext4 root), made once per campaign and shared by the targets' seeds. */
function image(dir: string): string {
  const path = join(dir, 'os.img');
  return existsSync(path) ? path : osImage(dir, 16 * MiB);
}

export const TARGETS: FuzzTarget[] = [
  {
    name: 'zip directory',
    seeds: (dir) => {
      const img = image(dir);
      sh(dir, `mkdir -p .meta && bmaptool create -o .meta/image.bmap ${img} && cp ${img} image.img && zip -q -1 seed.zip image.img .meta/image.bmap && rm image.img`);
      return [readFileSync(join(dir, 'seed.zip'))];
    },
    run: async (input) => {
      const readAt = readerOf(input);
      const archive = await readZipArchive(readAt, input.length, 'fuzz.zip');
      await entryPlan(readAt, archive.image);
      if (archive.bmapEntry !== null) await readSmallEntry(readAt, archive.bmapEntry, 1 * MiB);
    },
    documented: isJobError,
  },
  {
    name: 'xz index',
    seeds: (dir) => {
      const img = image(dir);
      sh(dir, `xz -T2 --block-size=1MiB -1 -c ${img} > seed.xz && head -c 100000 ${img} | xz -1 > small.xz`);
      return [readFileSync(join(dir, 'seed.xz')), readFileSync(join(dir, 'small.xz'))];
    },
    run: (input) => readXzIndex(readerOf(input), input.length),
    documented: isJobError,
  },
  {
    name: 'zstd frames',
    seeds: (dir) => {
      const img = image(dir);
      sh(dir, `zstd -q -1 -c ${img} > seed.zst && head -c 100000 ${img} | zstd -q --no-content-size > nosize.zst`);
      return [readFileSync(join(dir, 'seed.zst')), readFileSync(join(dir, 'nosize.zst'))];
    },
    run: async (input) => {
      readZstdSize((position, length) => input.subarray(position, position + length), input.length);
      parseFrameHeader(input, 0);
    },
    documented: isJobError,
  },
  {
    name: 'qcow2 header and tables',
    seeds: (dir) => {
      const img = image(dir);
      sh(dir, `qemu-img convert -c -O qcow2 ${img} seed.qcow2 && qemu-img convert -O qcow2 -o compat=0.10 ${img} v2.qcow2`);
      return [readFileSync(join(dir, 'seed.qcow2')), readFileSync(join(dir, 'v2.qcow2'))];
    },
    run: (input) => readQcow2(readerOf(input), input.length, 'fuzz.qcow2'),
    documented: isJobError,
  },
  {
    name: 'UDIF (dmg)',
    seeds: (dir) => {
      const img = image(dir);
      writeDmg(readFileSync(img), join(dir, 'seed.dmg'));
      return [readFileSync(join(dir, 'seed.dmg'))];
    },
    // @balena/udif reads through streams of a path: the input is written to a file first.
    run: async (input, dir) => {
      const path = join(dir, 'input.dmg');
      writeFileSync(path, input);
      await dmgSize(await openDmg(path, input.length, 'fuzz.dmg'));
    },
    documented: isJobError,
  },
  {
    name: 'bmap',
    seeds: (dir) => {
      const img = image(dir);
      sh(dir, `bmaptool create -o seed.bmap ${img}`);
      return [readFileSync(join(dir, 'seed.bmap'))];
    },
    run: async (input) => parseBmap(input.toString('utf8'), 'fuzz.bmap'),
    documented: isJobError,
  },
  {
    name: 'MBR and GPT',
    seeds: (dir) => {
      const img = image(dir);
      sh(dir, `truncate -s 8M mbr.img && printf 'label: dos\\n,4MiB,c\\n,,83\\n' | sfdisk --quiet mbr.img`);
      return [readFileSync(img).subarray(0, 34 * 512), readFileSync(join(dir, 'mbr.img')).subarray(0, 34 * 512), readFileSync(img).subarray(1 * MiB, 1 * MiB + 2048)];
    },
    run: async (input) => {
      readPartitionTable(input);
      filesystemLabel(input);
      detectFormat(input.subarray(0, 512), input.length >= 1024 ? input.subarray(input.length - 512) : null);
    },
    documented: () => false,
  },
  {
    name: 'checksum lists',
    seeds: () => [
      Buffer.from(`${'ab'.repeat(32)}  os.img\n${'cd'.repeat(32)} *other.img\n`),
      Buffer.from(`SHA256 (os.img) = ${'ef'.repeat(32)}\n`),
      Buffer.from(`${'01'.repeat(32)}\n`),
    ],
    run: async (input) => checksumFor(input.toString('utf8'), 'os.img'),
    documented: () => false,
  },
  {
    name: "the helper's messages",
    seeds: () => [
      Buffer.concat([
        encodeFrame({ type: 'job', job: { kind: 'flash', targets: ['/dev/sdb'], imageSize: 4096, sourceSeekable: true, verify: true, extents: [[0, 4096]] } }),
        encodeFrame({ type: 'source-end', ok: false, code: 'source-corrupt', message: 'x', offset: 5 }),
        encodeFrame({ type: 'cancel' }),
      ]),
    ],
    // The helper's own reading of what it is sent: frames, then the schema.
    run: async (input) => {
      const reader = new FrameReader();
      for (const message of reader.push(input)) v.safeParse(ToHelper, message);
    },
    documented: (error) => error instanceof FrameError,
  },
];

