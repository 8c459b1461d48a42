/**
 * An installer stick for one drive: the ISO opened as the user, its tree read (user/iso/), the
 * stick laid out for the drive (layout.ts), and its bytes fed to the helper that writes them
 * (stick-job.ts): head blanked first and written last, every written byte read back.
 */
import { randomBytes } from 'node:crypto';
import type { Drive } from '../../common/domain/drive.js';
import { jobError, toFailure } from '../../common/domain/failure.js';
import type { SourceEnd } from '../../common/domain/result.js';
import { closeFd, readFully, writeFully } from '../../node/io.js';
import { openImage, type OpenedImage } from '../images/files/open-image.js';
import type { ReadAt } from '../../node/read-at.js';
import { discVolume } from '../iso/classify.js';
import { stickPlan, type StickPlan } from './layout.js';
import { stickBytes } from './stick-stream.js';
import { filesOf, MAX_FAT32_FILE, readTree, type TreeFolder } from './tree.js';
import { splitWim, type SplitWim } from './wim-split.js';

/** An ISO opened for installer mode, with its tree read. */
export interface InstallerSource {
  image: OpenedImage;
  readAt: ReadAt;
  tree: TreeFolder;
  /** Files and their bytes, for the report. */
  files: number;
  fileBytes: number;
  /** The parts of a WIM split for the stick, when it had one too large for FAT32. */
  split: SplitWim | null;
  close(): Promise<void>;
}

/**
 * Files FAT32 cannot hold: a Windows image at sources/install.wim is split into parts that take
 * its place; any other such file is refused.
 */
async function fitFat32(tree: TreeFolder, readAt: ReadAt, image: string): Promise<SplitWim | null> {
  const oversized = [...filesOf(tree)].filter(([, file]) => file.size > MAX_FAT32_FILE);
  const other = oversized.find(([path, file]) => path.toLowerCase() !== '/sources/install.wim' || 'path' in file);
  if (other !== undefined) {
    throw jobError(
      'unsupported-format',
      `${image} holds ${other[0]}, of ${other[1].size} bytes: FAT32 holds files of at most 4 GiB - 1 byte, so installer mode cannot copy it (only sources/install.wim is split into parts).`,
    );
  }
  const [wim] = oversized;
  if (wim === undefined || 'path' in wim[1]) return null;
  const [, file, folder] = wim;
  const split = await splitWim(file, readAt, image);
  folder.files.splice(folder.files.indexOf(file), 1, ...split.parts);
  return split;
}

/**
 * Opens `path` and reads its tree; throws a JobError for an image that is no ISO, or one installer
 * mode cannot copy. With `split` false (a verify) the tree is the ISO's own, install.wim unsplit.
 */
export async function openInstallerSource(path: string, split = true): Promise<InstallerSource> {
  const image = await openImage(path);
  try {
    if (image.format !== 'raw')
      throw jobError(
        'unsupported-format',
        `Installer mode reads an ISO file as it is; ${path} is a ${image.format} file. Decompress it first.`,
      );
    const readAt: ReadAt = async (position, length) => {
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, image.fileSize - position)));
      return buffer.subarray(0, await readFully(image.fd, buffer, 0, buffer.length, position));
    };
    const volume = await discVolume(readAt, image.fileSize, path);
    if (volume === null)
      throw jobError(
        'unsupported-format',
        `${path} is not an ISO image (no ISO 9660 or UDF file system at byte 32768), so installer mode has no files to copy.`,
      );
    const tree = await readTree(volume, path);
    const parts = split ? await fitFat32(tree, readAt, path) : null;
    let files = 0;
    let fileBytes = 0;
    for (const [, file] of filesOf(tree)) {
      files += 1;
      fileBytes += file.size;
    }
    return {
      image,
      readAt,
      tree,
      files,
      fileBytes,
      split: parts,
      close: async () => {
        await parts?.dispose();
        await image.close();
      },
    };
  } catch (error) {
    await image.close();
    throw error;
  }
}

/** The stick's layout for `drive`; throws a JobError when the drive cannot take it. */
export function planStick(source: InstallerSource, drive: Pick<Drive, 'size' | 'logicalBlockSize'>): StickPlan {
  if (drive.size === null) throw jobError('target-not-found', 'The drive holds no medium.');
  return stickPlan(source.tree, {
    driveBytes: drive.size,
    sectorBytes: drive.logicalBlockSize,
    serial: randomBytes(4).readUInt32LE(),
    diskSignature: randomBytes(4).readUInt32LE(),
    image: source.image.path,
  });
}

/**
 * Writes the stick's bytes into `writeFd` (a pipe's write end) and closes it, then says how the
 * stream ended: a read of the ISO that failed (the file shrank, a disk error) fails the job before
 * the helper writes the head, so the drive never looks like a finished stick.
 */
export async function feedStick(
  source: InstallerSource,
  plan: StickPlan,
  writeFd: number,
  end: (how: SourceEnd) => void,
): Promise<void> {
  let bytes = 0;
  try {
    for await (const piece of stickBytes(plan, source.readAt, source.image.path)) {
      await writeFully(writeFd, piece, 0, piece.length, null);
      bytes += piece.length;
    }
    end({ ok: true, bytes });
  } catch (error) {
    end({ ok: false, failure: toFailure(error) });
  } finally {
    await closeFd(writeFd);
  }
}
