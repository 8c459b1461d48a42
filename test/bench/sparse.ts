/**
 * The "sparse" section of `npm run bench` (BENCH_SECTIONS=sparse runs it alone): time to a verified
 * card on a 20 MB/s card, where only writing less can help. The 1 GiB OS-like image as .xz against
 * `xz -dc | dd oflag=direct` + an O_DIRECT read-back, and as a sparse raw file with the .bmap
 * bmaptool makes of it against `bmaptool copy` (which checks the image's checksums but reads
 * nothing back from the card), and that flash again with --no-verify, which reads nothing back either.
 * The card is throttled for every writer, the kernel's writeback of bmaptool's buffered writes
 * included (throttledDevice).
 */
import { join } from 'node:path';
import { CLI } from '../support/cli.js';
import { assertOwnedLoop, createLoop } from '../support/loop-device.js';
import { SD_CARD_BYTES_PER_SECOND, throttledDevice } from '../support/throttle.js';
import { FORMATS } from './formats.js';
import { measure, medianOf, type Measurement } from './measure.js';
import { compressedFixture, OS_IMAGE_BYTES, osLikeImage } from './os-like-image.js';

const NODE = process.execPath;

export interface SparseRow {
  name: string;
  m: Measurement;
  reference?: Measurement;
  /** Issue 16's acceptance for this row: its time over the reference's at most this. */
  limit?: number;
  /** The README's row for this one (headlines.ts). */
  headline?: { job: string; reference: string };
}

/** The rows of the section, each run once (a run takes a minute at 20 MB/s), with its title. */
export async function sparseRows(scratch: string, fixtures: string): Promise<{ title: string; rows: SparseRow[] }> {
  const raw = osLikeImage(fixtures);
  const xzFormat = FORMATS.find((f) => f.file === 'os.img.xz');
  if (xzFormat === undefined) throw new Error('no xz format in the bench');
  const xz = compressedFixture(fixtures, xzFormat.file, xzFormat.make);
  // What a publisher ships beside a bmap: the image with its zeros as holes, then bmaptool's map of it.
  const sparse = compressedFixture(fixtures, 'os-sparse.img', 'cp --sparse=always os.img os-sparse.img.partial');
  const bmap = compressedFixture(
    fixtures,
    'os-sparse.img.bmap',
    'bmaptool -q create -o os-sparse.img.bmap.partial os-sparse.img',
  );
  const loop = createLoop({ size: OS_IMAGE_BYTES + 64 * 1024 * 1024, dir: scratch, fill: 'allocated' });
  assertOwnedLoop(loop.path);
  const card = throttledDevice(loop.path, SD_CARD_BYTES_PER_SECOND);
  const readBack = `dd if=${loop.path} bs=4M iflag=direct,count_bytes count=${OS_IMAGE_BYTES} status=none | cmp - ${raw}`;
  // Each run once, through medianOf, so that a command that fails (and might fail fast) stops the section instead of timing its failure.
  const once = (script: string) => medianOf(1, () => measure(script));
  const sluice = (image: string, flags = '') =>
    once(
      `${NODE} ${CLI} flash --yes --no-eject --json ${flags} ${image} ${loop.path} > ${join(scratch, 'sparse-result.json')}`,
    );
  try {
    const ddXz = await once(
      `xz -dc -T2 ${xz} | dd of=${loop.path} bs=4M iflag=fullblock oflag=direct conv=fsync status=none && ${readBack}`,
    );
    const oursXz = await sluice(xz);
    const bmaptool = await once(`bmaptool -q copy --bmap ${bmap} ${sparse} ${loop.path}`);
    const oursBmap = await sluice(sparse);
    // The same flash without its read-back: bmaptool reads nothing back, so this row shows how much
    // of the gap between the two rows above is the verification the issue also asks for.
    const oursBmapUnverified = await sluice(sparse, '--no-verify');
    return {
      title: `A 20 MB/s card (blkio-throttled loop, writeback included), 1 GiB OS-like image, time to a verified card`,
      rows: [
        { name: '`xz -dc -T2 | dd oflag=direct` + O_DIRECT read-back `cmp`', m: ddXz },
        {
          name: '**sluice flash** os.img.xz (free space left out)',
          m: oursXz,
          reference: ddXz,
          limit: 0.6,
          headline: { job: '1 GiB OS image as `.xz` onto a 20 MB/s card', reference: '`xz -dc -T2 | dd` + read-back' },
        },
        { name: '`bmaptool copy` (bmaptool-made .bmap, no read-back)', m: bmaptool },
        {
          name: '**sluice flash** os-sparse.img with its .bmap (and free space left out)',
          m: oursBmap,
          reference: bmaptool,
          limit: 1.0,
          headline: {
            job: 'the same raw, with its `.bmap`, onto that card',
            reference: '`bmaptool copy` (which reads nothing back)',
          },
        },
        {
          name: 'sluice flash --no-verify, the same (no read-back, as bmaptool)',
          m: oursBmapUnverified,
          reference: bmaptool,
        },
      ],
    };
  } finally {
    card.remove();
  }
}
