/**
 * Every folder and file of a disc image, read once before anything is written: what installer mode
 * copies onto the stick. Bounded as the readers are (user/iso/volume.ts): a directory met twice (a
 * loop), more entries than a disc holds, or a name that is not a plain name stops it with a
 * sentence. Files FAT32 cannot hold are read as any other: installer-job.ts decides about them.
 */
import { WalkGuard, type DiscEntry, type DiscVolume } from '../iso/volume.js';

/** FAT32 records a file's size in 32 bits. */
export const MAX_FAT32_FILE = 2 ** 32 - 1;

/** A file Sluice made for the stick in a private folder of its own (a split WIM's part). */
export interface MadeFile {
  name: string;
  size: number;
  path: string;
}

/** A file of the stick: one of the ISO's, or one Sluice made. */
export type StickFile = DiscEntry | MadeFile;

export interface TreeFolder {
  name: string;
  folders: TreeFolder[];
  files: StickFile[];
}

/** Reads the whole tree; `path` names a folder in messages. */
export async function readTree(volume: DiscVolume, image: string): Promise<TreeFolder> {
  const guard = new WalkGuard(image);
  const walk = async (entry: DiscEntry, path: string): Promise<TreeFolder> => {
    if (entry.place >= 0) guard.directory(entry.place);
    const folder: TreeFolder = { name: entry.name, folders: [], files: [] };
    for (const child of await volume.list(entry)) {
      guard.entry();
      const childPath = `${path}/${child.name}`;
      if (child.directory) folder.folders.push(await walk(child, childPath));
      else folder.files.push(child);
    }
    return folder;
  };
  return walk(volume.root, '');
}

/** Every file of a tree, depth first, with its path and its folder. */
export function* filesOf(folder: TreeFolder, path = ''): Generator<[string, StickFile, TreeFolder]> {
  for (const file of folder.files) yield [`${path}/${file.name}`, file, folder];
  for (const child of folder.folders) yield* filesOf(child, `${path}/${child.name}`);
}
