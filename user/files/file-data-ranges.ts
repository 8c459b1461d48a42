/**
 * Where a file holds data and where it has holes, as its filesystem says: lseek(SEEK_DATA) and
 * lseek(SEEK_HOLE). A hole reads as zeros by definition, so a sparse backup's free space is
 * proven zero by asking, not by reading and comparing gigabytes of zeros. Node cannot make the
 * call, so it goes through koffi (as darwin-uncached.ts does), on the unprivileged side only.
 * A filesystem without holes reports all of the file as data; then everything is read.
 */
import type { Extent } from '../../common/domain/extents.js';

/** The C library and the two whence values, per system (<unistd.h>); none on Windows. */
const FLAVOURS: Partial<Record<NodeJS.Platform, { library: string; SEEK_DATA: number; SEEK_HOLE: number }>> = {
  linux: { library: 'libc.so.6', SEEK_DATA: 3, SEEK_HOLE: 4 },
  darwin: { library: '/usr/lib/libSystem.B.dylib', SEEK_DATA: 4, SEEK_HOLE: 3 },
};
/** ENXIO, on both: no data at or after the offset asked. */
const ENXIO = 6;

type Seek = (fd: number, offset: number, whence: number) => number;

let loaded: Promise<{ seek: Seek; SEEK_DATA: number; SEEK_HOLE: number } | null> | null = null;

async function load(): Promise<{ seek: Seek; SEEK_DATA: number; SEEK_HOLE: number } | null> {
  const flavour = FLAVOURS[process.platform];
  if (flavour === undefined) return null;
  try {
    const koffi = (await import('koffi')).default;
    const lseek = koffi.load(flavour.library).func('int64_t lseek(int fd, int64_t offset, int whence)');
    const seek: Seek = (fd, offset, whence) => {
      const at = Number(lseek(fd, offset, whence));
      if (at >= 0) return at;
      if (koffi.errno() === ENXIO) return -1;
      throw new Error(`lseek failed: errno ${koffi.errno()}`);
    };
    return { seek, SEEK_DATA: flavour.SEEK_DATA, SEEK_HOLE: flavour.SEEK_HOLE };
  } catch {
    // No FFI here (a missing prebuilt binary): the caller reads everything instead.
    return null;
  }
}

/**
 * The ranges of [from, to) of the file open on `fd` that hold data (sorted, disjoint), or null
 * where the system cannot say (Windows, no FFI, an lseek that fails): then treat it all as data.
 */
export async function dataRanges(fd: number, from: number, to: number): Promise<Extent[] | null> {
  const calls = await (loaded ??= load());
  if (calls === null) return null;
  const out: Extent[] = [];
  try {
    for (let at = from; at < to;) {
      const data = calls.seek(fd, at, calls.SEEK_DATA);
      if (data < 0 || data >= to) break;
      // Every file ends in a hole (its end), so SEEK_HOLE after data answers; -1 only if it shrank meanwhile.
      const found = calls.seek(fd, data, calls.SEEK_HOLE);
      const hole = found < 0 ? to : Math.min(to, found);
      out.push([data, hole - data]);
      at = hole;
    }
  } catch {
    return null;
  }
  return out;
}
