/**
 * The comparison: etcher-sdk (balenaEtcher's engine) writing and verifying the same image to the
 * same loop device. Run as its own process so the bench measures its whole RSS and CPU.
 * Usage: node etcher-flash.js IMAGE DEVICE [IMAGE_BYTES]
 */
import { execFileSync } from 'node:child_process';
import { decompressThenFlash } from 'etcher-sdk/build/multi-write.js';
import { BlockDevice } from 'etcher-sdk/build/source-destination/block-device.js';
import { File } from 'etcher-sdk/build/source-destination/file.js';
// Each container format registers itself with etcher-sdk when its module loads; without these
// imports getInnerSource() finds no decoder and etcher-sdk writes the compressed bytes as they are.
import 'etcher-sdk/build/source-destination/gzip.js';
import 'etcher-sdk/build/source-destination/xz.js';
import 'etcher-sdk/build/source-destination/zip.js';
import 'etcher-sdk/build/source-destination/bzip2.js';
import 'etcher-sdk/build/source-destination/dmg.js';

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
