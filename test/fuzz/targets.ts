/**
 * The fuzz targets: every parser that reads bytes Sluice did not write, each with seeds made by
 * the format's own reference tool and the errors it is allowed to end with. Anything else it
 * throws, more than FUZZ_INPUT_MS of CPU (or FUZZ_INPUT_WAIT_MS of waiting) on one input, or the
 * process outgrowing its memory cap, is a finding (campaign.ts).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import * as v from 'valibot';
import { ToHelper } from '../../common/contracts/helper-protocol.js';
import { ProbeReply } from '../../common/contracts/probe-protocol.js';
import { JobError } from '../../common/domain/failure.js';
import { MiB } from '../../common/domain/units.js';
import { encodeFrame, FrameError, FrameReader } from '../../node/framing.js';
import { parseBmap } from '../../user/images/formats/bmap.js';
import { checksumFor } from '../../user/images/files/checksums.js';
import { parseFrameHeader } from '../../user/images/decode/zstd-frames.js';
import { detectFormat } from '../../user/images/formats/detect-format.js';
import { dmgSize, openDmg } from '../../user/images/formats/dmg.js';
import { findFreeSpace } from '../../user/images/free-space/find-free-space.js';
import { randomAccess, StreamedImage } from '../../user/images/free-space/image-reader.js';
import { filesystemLabel, readPartitionTable } from '../../user/images/formats/partition-table.js';
import { readQcow2 } from '../../user/images/formats/qcow2.js';
import type { ReadAt } from '../../node/read-at.js';
import { readXzIndex } from '../../user/images/formats/xz-index.js';
import { entryPlan, readSmallEntry, readZipArchive } from '../../user/images/formats/zip-directory.js';
import { prepareImage } from '../../user/images/probe/probe.js';
import { addressScope } from '../../user/images/http/redirect-policy.js';
import { parseOsList } from '../../user/catalogue/os-list.js';
import { checkedCatalogue } from '../../user/catalogue/catalogue-launch.js';
import { catalogueDocuments, type TestImage } from '../support/catalogue.js';
import { readZstdSize } from '../../user/images/formats/zstd-size.js';
import { detectMethod } from '../../user/customise/detect.js';
import { Ext4Reader } from '../../user/customise/ext4.js';
import { FatEditor } from '../../user/customise/fat.js';
import { serve, type FileServer } from '../support/file-server.js';
import { osImage, sh } from '../support/os-image.js';
import { RepairInbox } from '../../writer/repair-inbox.js';
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
  return (position, length) =>
    Promise.resolve(
      Buffer.from(bytes.subarray(Math.max(0, position), Math.max(0, Math.min(bytes.length, position + length)))),
    );
}

/**
 * The first 2 MiB of a 16 MiB OS-like image (GPT, FAT boot, ext4 root), made once per campaign
 * and shared by the targets' seeds: the structures a parser reads are all there, and inputs stay
 * small (a mutated copy of a 5 MB seed per input churned the resident set by hundreds of MB
 * between collections, which the memory check took for a finding).
 */
function image(dir: string): string {
  const path = join(dir, 'seed.img');
  if (!existsSync(path)) sh(dir, `head -c ${2 * MiB} ${osImage(dir, 16 * MiB)} > seed.img`);
  return path;
}

/**
 * A 2 MiB disk whose one partition (1 MiB at 1 MiB, MBR) holds `mkfs` (a command run on the
 * partition file `part`): small enough for the campaign's memory check, whole enough that the
 * free-space readers reach the bitmaps or the FAT.
 */
function smallDisk(dir: string, name: string, type: string, mkfs: string): Buffer {
  sh(
    dir,
    `truncate -s 1M part && ${mkfs} && truncate -s 2M ${name} && printf 'label: dos\\nstart=2048, size=2048, type=${type}\\n' | sfdisk --quiet ${name} && dd if=part of=${name} bs=1M seek=1 conv=notrunc status=none && rm part`,
  );
  return readFileSync(join(dir, name));
}

export const TARGETS: FuzzTarget[] = [
  {
    name: 'filesystem free space',
    seeds: (dir) => {
      sh(dir, 'mkdir -p tree && head -c 100000 /dev/urandom > tree/blob && echo hello > tree/note');
      return [
        smallDisk(dir, 'ext4.img', '83', 'mkfs.ext4 -q -F -b 1024 -d tree part'),
        smallDisk(dir, 'ext2.img', '83', 'mkfs.ext2 -q -F -b 1024 -O ^resize_inode -d tree part'),
        smallDisk(dir, 'fat.img', 'c', 'mkfs.vfat part > /dev/null && mcopy -i part tree/blob ::/blob'),
        readFileSync(image(dir)),
      ];
    },
    // Bytes of an image cannot make the readers throw (they find nothing instead): any error is a finding.
    run: async (input) => {
      await findFreeSpace(randomAccess(readerOf(input)), input.length, () => undefined);
      const stream = new StreamedImage();
      const finding = findFreeSpace(stream.read, input.length, () => undefined).finally(() => stream.done());
      for (let at = 0; at < input.length && !stream.idle; at += 64 * 1024)
        await stream.feed(input.subarray(at, at + 64 * 1024), at);
      stream.end();
      await finding;
    },
    documented: () => false,
  },
  {
    name: 'zip directory',
    seeds: (dir) => {
      const img = image(dir);
      sh(
        dir,
        `mkdir -p .meta && bmaptool create -o .meta/image.bmap ${img} && cp ${img} image.img && zip -q -1 seed.zip image.img .meta/image.bmap && rm image.img`,
      );
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
      sh(dir, `xz -T2 --block-size=256KiB -1 -c ${img} > seed.xz && head -c 100000 ${img} | xz -1 > small.xz`);
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
      sh(
        dir,
        `qemu-img convert -c -O qcow2 ${img} seed.qcow2 && qemu-img convert -O qcow2 -o compat=0.10 ${img} v2.qcow2`,
      );
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
      return [
        readFileSync(img).subarray(0, 34 * 512),
        readFileSync(join(dir, 'mbr.img')).subarray(0, 34 * 512),
        readFileSync(img).subarray(1 * MiB, 1 * MiB + 2048),
      ];
    },
    run: async (input) => {
      readPartitionTable(input);
      filesystemLabel(input);
      detectFormat(input.subarray(0, 512), input.length >= 1024 ? input.subarray(input.length - 512) : null);
    },
    documented: () => false,
  },
  {
    name: 'FAT boot partition',
    seeds: (dir) => {
      sh(
        dir,
        `truncate -s 1M fat12.img && mkfs.fat -F 12 fat12.img >/dev/null && printf 'console=tty1 rootwait\\n' > cmdline.txt && mcopy -i fat12.img cmdline.txt ::/cmdline.txt && mcopy -i fat12.img cmdline.txt ::/a-long-file-name.txt`,
      );
      sh(
        dir,
        `truncate -s 34M fat32.img && mkfs.fat -F 32 -s 1 fat32.img >/dev/null && mcopy -i fat32.img cmdline.txt ::/cmdline.txt && head -c 600K fat32.img > fat32.head`,
      );
      return [readFileSync(join(dir, 'fat12.img')), readFileSync(join(dir, 'fat32.head'))];
    },
    // What customisation does with a boot partition: open it, list it, read cmdline.txt, plan new files.
    run: async (input) => {
      const fat = await FatEditor.open(readerOf(input), 0, 64 * MiB);
      if (fat === null) return;
      fat.entries();
      await fat.readFile('cmdline.txt');
      fat.writeFiles(
        [
          { name: 'firstrun.sh', bytes: Buffer.alloc(3000, 0x41) },
          { name: 'cmdline.txt', bytes: Buffer.from('console=tty1 x\n') },
          { name: 'network-config', bytes: Buffer.from('version: 2\n') },
        ],
        'cmdline.txt',
      );
      fat.writes();
    },
    documented: isJobError,
  },
  {
    name: 'ext4 root filesystem',
    seeds: (dir) => {
      sh(
        dir,
        'mkdir -p tree/usr/lib/raspberrypi-sys-mods tree/etc/cloud tree/boot/firmware && touch tree/usr/lib/raspberrypi-sys-mods/imager_custom && truncate -s 8M ext4.img && mke2fs -q -F -t ext4 -d tree ext4.img && head -c 2M ext4.img > ext4.head',
      );
      return [readFileSync(join(dir, 'ext4.head'))];
    },
    run: async (input) => {
      const root = await Ext4Reader.open(readerOf(input), 0, 8 * MiB);
      for (const path of [
        '/usr/lib/raspberrypi-sys-mods/imager_custom',
        '/etc/cloud',
        '/boot/firmware',
        '/usr/lib/systemd/system/rpi-preseed.service',
      ])
        await root?.kind(path);
    },
    documented: () => false,
  },
  {
    name: 'customisation method detection',
    seeds: (dir) => [readFileSync(image(dir))],
    run: async (input) =>
      detectMethod({ readAt: readerOf(input), random: true }, readPartitionTable(input.subarray(0, 34 * 512))),
    documented: isJobError,
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
        encodeFrame({
          type: 'job',
          job: {
            kind: 'flash',
            targets: ['/dev/sdb'],
            imageSize: 4096,
            sourceSeekable: true,
            verify: true,
            extents: [[0, 4096]],
          },
        }),
        encodeFrame({ type: 'source-end', ok: false, code: 'source-corrupt', message: 'x', offset: 5 }),
        encodeFrame({ type: 'cancel' }),
      ]),
      Buffer.concat([
        encodeFrame({ type: 'repair-progress', id: 1, bytes: 4096 }),
        encodeFrame({ type: 'repair-data', id: 1, offset: 4096, data: Buffer.alloc(48, 7).toString('base64') }),
        encodeFrame({ type: 'repair-failed', id: 1, code: 'source-corrupt', message: 'x', offset: 5 }),
      ]),
    ],
    // The helper's own reading of what it is sent: frames, then the schema.
    run: async (input) => {
      const reader = new FrameReader();
      for (const message of reader.push(input)) v.safeParse(ToHelper, message);
    },
    documented: (error) => error instanceof FrameError,
  },
  {
    name: 'repair answers',
    seeds: () => [
      Buffer.concat([
        encodeFrame({ type: 'repair-progress', id: 1, bytes: 1000 }),
        encodeFrame({ type: 'repair-data', id: 1, offset: 4096, data: Buffer.alloc(4096, 1).toString('base64') }),
        encodeFrame({ type: 'repair-data', id: 1, offset: 8192, data: Buffer.alloc(4096, 2).toString('base64') }),
        encodeFrame({ type: 'repair-data', id: 1, offset: 65536, data: Buffer.alloc(4096, 3).toString('base64') }),
      ]),
      encodeFrame({ type: 'repair-failed', id: 1, code: 'source-corrupt', message: 'The xz data is corrupt.' }),
    ],
    // What the helper makes of the other side's answer to a repair request: only bytes of the
    // ranges it asked for, in order, ever reach what writes them.
    run: async (input) => {
      const ranges: [number, number][] = [
        [4096, 8192],
        [65536, 4096],
      ];
      const asked = ranges.reduce((sum, [, length]) => sum + length, 0);
      let taken = 0;
      const stop = new AbortController();
      const inbox = new RepairInbox(() => undefined, 1000);
      const read = inbox.read(
        ranges,
        async (bytes) => {
          taken += bytes.length;
          if (taken > asked) throw new Error(`took ${taken} bytes of the ${asked} asked for`);
        },
        stop.signal,
      );
      const ended = read.then(
        () => null,
        (error: unknown) => (error instanceof JobError ? null : error),
      );
      await Promise.resolve();
      for (const message of new FrameReader().push(input)) {
        const parsed = v.safeParse(ToHelper, message);
        if (
          parsed.success &&
          (parsed.output.type === 'repair-data' ||
            parsed.output.type === 'repair-progress' ||
            parsed.output.type === 'repair-failed')
        )
          inbox.deliver(parsed.output);
      }
      await new Promise((resolve) => setImmediate(resolve));
      stop.abort();
      const error = await ended;
      if (error !== null) throw error;
    },
    documented: (error) => error instanceof FrameError,
  },
  {
    name: 'the HTTP probe',
    seeds: (dir) => {
      const img = image(dir);
      sh(dir, `xz -T2 --block-size=256KiB -1 -c ${img} > probe.xz && head -c 65536 ${img} > head.img`);
      return [readFileSync(join(dir, 'probe.xz')), readFileSync(join(dir, 'head.img'))];
    },
    // A server on 127.0.0.1 that answers with the input, ranges included (an .xz's index is read
    // with range requests); the probe reads the first bytes, and an index or a partition table.
    run: async (input) => {
      const server = await probeServer();
      served = input;
      return prepareImage({ image: `${server.base}/image.xz`, partitions: true });
    },
    documented: isJobError,
  },
  {
    name: "the probe process's answer",
    seeds: () => [
      Buffer.from(JSON.stringify({ type: 'failed', code: 'source-corrupt', message: 'x', offset: 3 })),
      Buffer.from(
        JSON.stringify({
          type: 'prepared',
          prepared: {
            info: {
              source: '/x.img',
              name: 'x.img',
              origin: 'file',
              format: 'raw',
              sourceSize: 4096,
              size: 4096,
              sizeExact: true,
              partitionTable: null,
              disc: null,
              entry: null,
              blockMap: null,
              checksum: null,
              customisation: null,
              customisationNote: null,
            },
          },
        }),
      ),
    ],
    // What the app and the CLI trust of a probe process that may have been subverted: only what the schema lets through.
    run: async (input) => asMessage(input, (message) => v.safeParse(ProbeReply, message)),
    documented: () => false,
  },
  {
    name: 'redirect addresses',
    seeds: () =>
      ['127.0.0.1', '::ffff:127.0.0.1', 'fe80::1', '10.1.2.3', '192.168.0.1', '8.8.8.8', '2001:db8::1', '[::1]'].map(
        (address) => Buffer.from(address),
      ),
    // Its callers hand it resolved addresses only (dns.lookup's); it refuses anything else by contract.
    run: async (input) => {
      const text = input.toString('latin1');
      return isIP(text) === 0 ? null : addressScope(text);
    },
    documented: () => false,
  },
  {
    name: 'catalogue documents',
    // The test catalogue's three documents (top level with boards, a category's, a nested one), as a server sends them.
    seeds: () => {
      const image = (name: string): TestImage => ({
        raw: '',
        xz: '',
        path: `/images/${name}.img.xz`,
        extractSha256: 'ab'.repeat(32),
        downloadSha256: 'cd'.repeat(32),
        downloadSize: 5_000_000,
      });
      const documents = catalogueDocuments({ lite: image('lite'), desktop: image('desktop'), rescue: image('rescue') });
      return Object.values(documents).map((document) => Buffer.from(JSON.stringify(document, null, 2)));
    },
    run: async (input) => parseOsList(input, { source: 'https://lists.example/os_list_v4.json', depth: 0 }),
    documented: isJobError,
  },
  {
    name: "the catalogue process's answer",
    seeds: () => {
      const os = {
        kind: 'os',
        name: 'x',
        description: '',
        icon: null,
        url: 'https://x/x.img.xz',
        releaseDate: '2026-01-01',
        extractSize: 1,
        extractSha256: 'ab'.repeat(32),
        downloadSize: 1,
        downloadSha256: null,
        devices: ['a'],
        initFormat: 'systemd',
        architecture: null,
        website: null,
        bmapUrl: null,
      };
      const items = [
        os,
        { kind: 'category', name: 'c', description: '', icon: null, website: null, items: [os], subitemsUrl: null },
      ];
      return [
        Buffer.from(
          JSON.stringify({
            type: 'document',
            document: {
              source: 'https://x/list.json',
              boards: [
                { name: 'b', description: '', icon: null, tags: ['a'], matchingType: 'exclusive', architecture: null },
              ],
              items,
              notes: ['n'],
              offline: null,
            },
          }),
        ),
        Buffer.from(JSON.stringify({ type: 'failed', code: 'source-read-error', message: 'x' })),
      ];
    },
    // What the app and the CLI take from a catalogue process that may have been subverted.
    run: async (input) =>
      asMessage(input, (message) =>
        checkedCatalogue(
          { source: 'https://x/list.json', depth: 0, expand: false, savedDir: null, localNetwork: false },
          message,
        ),
      ),
    documented: () => false,
  },
];

/** An IPC message is JSON by the time it is checked: input that is not JSON never reaches the check. */
function asMessage(input: Buffer, check: (message: unknown) => unknown): unknown {
  let message: unknown;
  try {
    message = JSON.parse(input.toString('utf8'));
  } catch {
    return null;
  }
  return check(message);
}

/** The HTTP probe target's server, started once, and what it answers with now. */
let server: Promise<FileServer> | null = null;
let served: Buffer = Buffer.alloc(0);
function probeServer(): Promise<FileServer> {
  server ??= serve((request, response) => {
    if (request.url !== '/image.xz') return void response.writeHead(404).end();
    const range = /^bytes=(\d+)-(\d+)$/.exec(request.headers.range ?? '');
    if (range === null) return void response.writeHead(200, { 'Content-Length': served.length }).end(served);
    const start = Math.min(Number(range[1]), served.length);
    const end = Math.min(Number(range[2]), served.length - 1);
    response
      .writeHead(206, {
        'Content-Range': `bytes ${start}-${end}/${served.length}`,
        'Content-Length': Math.max(0, end - start + 1),
      })
      .end(served.subarray(start, end + 1));
  });
  return server;
}
