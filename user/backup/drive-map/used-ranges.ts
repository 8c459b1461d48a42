/**
 * What a backup of the used blocks reads. The drive's partition table and the filesystems' maps are
 * read by the same readers that find an image's free space when flashing (images/free-space/):
 * what they prove free is left out and is zero in the file; everything else (the tables, gaps
 * between partitions, what lies past the last one, unknown partitions, filesystems they do not
 * trust) is read whole. It runs in the drive map reader's process (main.ts).
 */
import { mergeExtents, subtractExtents, type Extent } from '../../../common/domain/extents.js';
import { MAX_USED_RANGES } from '../../../common/contracts/drive-map-protocol.js';
import { freeSpaceOf } from '../../images/free-space/find-free-space.js';
import type { ReadImage } from '../../images/free-space/image-reader.js';

/**
 * Free runs kept out at most: the shortest beyond are read after all. It bounds the read messages
 * (MAX_EXTENTS ranges each) to fewer than the helper holds (writer/read-requests.ts).
 */
const MAX_FREE_RUNS = MAX_USED_RANGES - 1;

/**
 * The ranges of the drive's first `length` bytes a backup reads: all but the free space its
 * filesystems prove. What lies past the last partition is not proven free (a system may keep
 * something there, and nothing says otherwise), so it is read unless the backup was trimmed to
 * the partitions, which makes `length` end there.
 */
export async function usedRanges(read: ReadImage, length: number): Promise<Extent[]> {
  const free = await freeSpaceOf(read, length, MAX_FREE_RUNS);
  return subtractExtents([[0, length]], mergeExtents(free.flatMap((f) => f.extents)));
}
