/**
 * What an optical-disc image does once written to a stick as it is, before anything is written:
 * a hybrid ISO (a partition table beside the ISO 9660 tree) boots from a stick; an ISO without one
 * boots only from a DVD, or from a stick Sluice builds from its files (installer mode).
 */
import { JobError } from '../../common/domain/failure.js';
import { MAX_EFI_LOADERS, type DiscImage, type PartitionTable } from '../../common/domain/image.js';
import type { ReadAt } from '../../node/read-at.js';
import { hasRockRidge, iso9660Volume, readDescriptors, type VolumeDescriptors } from './iso9660.js';
import { udfVolume } from './udf.js';
import { findPath, type DiscVolume } from './volume.js';

/** What Windows Setup needs on its stick, by path (compared without case). */
const WINDOWS_BOOT = [['bootmgr'], ['efi', 'boot', 'bootx64.efi']];
const WINDOWS_IMAGES = [
  ['sources', 'install.wim'],
  ['sources', 'install.esd'],
];

/** The file system installer mode reads: UDF where there is one (Windows ISOs), else ISO 9660. */
export async function discVolume(readAt: ReadAt, imageSize: number, image: string): Promise<DiscVolume | null> {
  return volumeOf(await readDescriptors(readAt), readAt, imageSize, image);
}

async function volumeOf(
  descriptors: VolumeDescriptors,
  readAt: ReadAt,
  imageSize: number,
  image: string,
): Promise<DiscVolume | null> {
  if (descriptors.udf) return udfVolume(readAt, imageSize, image);
  const { primary, joliet } = descriptors;
  if (primary === null) return null;
  if (joliet !== null && !(await hasRockRidge(readAt, primary)))
    return iso9660Volume(readAt, imageSize, image, joliet, true);
  return iso9660Volume(readAt, imageSize, image, primary, false);
}

/** The EFI loaders at /EFI/BOOT/BOOT*.EFI, as paths. */
async function efiLoaders(volume: DiscVolume): Promise<string[]> {
  const folder = await findPath(volume, ['EFI', 'BOOT']);
  if (folder === null || !folder.directory) return [];
  return (await volume.list(folder))
    .filter((entry) => !entry.directory && /^boot.*\.efi$/i.test(entry.name))
    .slice(0, MAX_EFI_LOADERS)
    .map((entry) => `/EFI/BOOT/${entry.name}`);
}

async function isWindowsInstaller(volume: DiscVolume): Promise<boolean> {
  for (const path of WINDOWS_BOOT) if ((await findPath(volume, path)) === null) return false;
  for (const path of WINDOWS_IMAGES) if ((await findPath(volume, path)) !== null) return true;
  return false;
}

/**
 * Classifies an image read at any offset: null when it is no optical-disc image (no ISO 9660 or
 * UDF descriptor at sector 16). A tree that cannot be read is said in `problem`, and the image is
 * classified by what its descriptors alone show.
 */
export async function classifyDisc(
  readAt: ReadAt,
  imageSize: number,
  image: string,
  table: PartitionTable | null,
): Promise<DiscImage | null> {
  const descriptors = await readDescriptors(readAt);
  if (descriptors.primary === null && !descriptors.udf) return null;
  const filesystem = descriptors.udf ? 'udf' : 'iso9660';
  const partitioned = table !== null && table.type !== 'none';
  const described: DiscImage = {
    kind: partitioned ? 'hybrid' : descriptors.elTorito ? 'non-hybrid' : 'not-bootable',
    filesystem,
    elTorito: descriptors.elTorito,
    efiLoaders: [],
    problem: null,
  };
  try {
    const volume = await volumeOf(descriptors, readAt, imageSize, image);
    if (volume === null) return described;
    const loaders = await efiLoaders(volume);
    const windows = await isWindowsInstaller(volume);
    const kind = partitioned
      ? 'hybrid'
      : windows
        ? 'windows'
        : descriptors.elTorito || loaders.length > 0
          ? 'non-hybrid'
          : 'not-bootable';
    return { ...described, kind, efiLoaders: loaders };
  } catch (error) {
    if (!(error instanceof JobError)) throw error;
    return { ...described, problem: error.failure.message };
  }
}
