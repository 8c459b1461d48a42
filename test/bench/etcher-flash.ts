/**
 * The comparison: etcher-sdk (balenaEtcher's engine) writing and verifying the same image to the
 * same loop device. Run as its own process so the bench measures its whole RSS and CPU.
 * Usage: node etcher-flash.js IMAGE DEVICE [IMAGE_BYTES]
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * etcher-sdk is the bench's own dependency (test/bench/package.json, installed by `npm run bench`),
 * not Sluice's: it compiles five native packages that nothing Sluice ships uses. This file runs
 * from out/test/bench/, so it loads etcher-sdk (CommonJS) from that package, and types the little
 * it uses here rather than making the project's typecheck depend on the bench's install.
 */
const load = createRequire(fileURLToPath(new URL('../../../test/bench/package.json', import.meta.url)));
const { decompressThenFlash } = load('etcher-sdk/build/multi-write.js') as {
  decompressThenFlash(options: {
    source: unknown;
    destinations: unknown[];
    onFail: (destination: unknown, error: Error) => void;
    onProgress: () => void;
    verify: boolean;
  }): Promise<{ failures: Map<unknown, Error>; bytesWritten: number }>;
};
const { BlockDevice } = load('etcher-sdk/build/source-destination/block-device.js') as {
  BlockDevice: new (options: { drive: object; write: boolean; direct: boolean; unmountOnSuccess: boolean }) => object;
};
const { File } = load('etcher-sdk/build/source-destination/file.js') as {
  File: new (options: { path: string }) => object;
};
// Each container format registers itself with etcher-sdk when its module loads; without these
// the inner source finds no decoder and etcher-sdk writes the compressed bytes as they are.
for (const format of ['gzip', 'xz', 'zip', 'bzip2', 'dmg']) load(`etcher-sdk/build/source-destination/${format}.js`);

const [image, device] = process.argv.slice(2);
if (image === undefined || device === undefined) throw new Error('usage: etcher-flash IMAGE DEVICE');

const drive = {
  device,
  raw: device,
  devicePath: null,
  description: 'bench loop device',
  // A block device's stat size is 0; etcher-sdk needs the real one to verify the right span.
  size: Number(execFileSync('blockdev', ['--getsize64', device], { encoding: 'utf8' }).trim()),
  blockSize: 512,
  logicalBlockSize: 512,
  mountpoints: [],
  isSystem: false,
  isReadOnly: false,
  isRemovable: true,
  isVirtual: true,
  isUSB: null,
  isSCSI: null,
  isUAS: null,
  isCard: null,
  busType: 'UNKNOWN',
  busVersion: null,
  enumerator: 'bench',
  error: null,
  partitionTableType: null,
};

const failures: string[] = [];
const result = await decompressThenFlash({
  source: new File({ path: image }),
  destinations: [new BlockDevice({ drive, write: true, direct: true, unmountOnSuccess: false })],
  onFail: (_destination, error) => failures.push(error.message),
  onProgress: () => undefined,
  verify: true,
});
if (failures.length > 0 || result.failures.size > 0) {
  process.stderr.write(`etcher-sdk failed: ${failures.join('; ')}\n`);
  process.exit(1);
}
// A run that wrote the wrong thing must not count as a fast one: the image's own size must have
// been written (etcher-sdk reports the source's size in bytesWritten).
const expected = process.argv[4];
if (expected !== undefined && result.bytesWritten !== Number(expected)) {
  process.stderr.write(`etcher-sdk wrote ${result.bytesWritten} bytes, not the image's ${expected}\n`);
  process.exit(1);
}
