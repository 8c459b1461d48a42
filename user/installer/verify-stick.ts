/**
 * `sluice verify ISO DEVICE --iso-mode files`: every file of the ISO compared, byte for byte, with
 * the file of the same name on the installer stick, read back through the helper's range reads.
 * A Windows image split for FAT32 is checked as the flash checked it: its install*.swm parts copied
 * into a private folder, `wimlib-imagex verify` over them, and the images they hold (count and
 * sizes, from the WIM's XML data) the same as the ISO's install.wim holds.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { constants } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobError } from '../../common/domain/failure.js';
import { closeFd, openFd, writeFully } from '../../node/io.js';
import { runTool } from '../../node/run-tool.js';
import type { FatEntry } from '../customise/fat.js';
import type { ReadAt } from '../../node/read-at.js';
import type { ByteExtent, DiscEntry } from '../iso/volume.js';
import { discFileBytes } from './stick-stream.js';
import { readRuns, StickVolume } from './stick-volume.js';
import { MAX_FAT32_FILE, type TreeFolder } from './tree.js';
import { wimImages } from './wim-images.js';
import { wimTool } from './wim-split.js';

const ATTR_DIRECTORY = 0x10;
const COPY_BYTES = 4 * 1024 * 1024;
const TOOL_TIMEOUT_MS = 60 * 60 * 1000;
/** Differences named in the result; past these, only counted. */
const MAX_NAMED = 20;

export interface StickCheck {
  /** Files compared, and their bytes. */
  files: number;
  bytes: number;
  /** What differs, one sentence each: a file's path first. */
  problems: string[];
}

interface Iso {
  tree: TreeFolder;
  readAt: ReadAt;
  path: string;
}

/** Compares one file's bytes; a sentence naming the first byte that differs, or null. */
async function compareFile(
  iso: Iso,
  file: DiscEntry,
  drive: ReadAt,
  runs: readonly ByteExtent[],
  path: string,
): Promise<string | null> {
  let at = 0;
  for await (const piece of discFileBytes(file, iso.readAt, iso.path)) {
    const stick = await readRuns(drive, runs, at, piece.length);
    if (!stick.equals(piece)) {
      let i = 0;
      while (i < piece.length && stick[i] === piece[i]) i++;
      return `${path} differs from the ISO's at byte ${at + i}`;
    }
    at += piece.length;
  }
  return null;
}

/** Copies the stick's parts into a private folder, has wimlib-imagex verify them, and compares their images with the ISO's WIM. */
async function checkParts(
  iso: Iso,
  wim: DiscEntry,
  parts: FatEntry[],
  stick: StickVolume,
  drive: ReadAt,
  path: string,
) {
  const folder = path.slice(0, path.lastIndexOf('/'));
  if (!parts.some((p) => p.name.toLowerCase() === 'install.swm'))
    return `${path} is over 4 GiB - 1 byte, and ${folder}/install.swm is not on the stick`;
  const tool = await wimTool(`Checking the install.swm parts on the stick`);
  const dir = await mkdtemp(join(tmpdir(), 'sluice-swm-'));
  try {
    for (const part of parts) {
      const runs = await stick.runs(part.cluster, part.size, `${folder}/${part.name}`);
      const fd = await openFd(
        join(dir, part.name.toLowerCase()),
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
      );
      try {
        for (let at = 0; at < part.size; at += COPY_BYTES) {
          const piece = await readRuns(drive, runs, at, Math.min(COPY_BYTES, part.size - at));
          await writeFully(fd, piece, 0, piece.length, null);
        }
      } finally {
        await closeFd(fd);
      }
    }
    try {
      await runTool(tool, ['verify', join(dir, 'install.swm'), `--ref=${join(dir, 'install*.swm')}`], TOOL_TIMEOUT_MS);
    } catch (error) {
      return `${folder}/install*.swm do not verify: ${(error as Error).message}`;
    }
    const first = parts.find((p) => p.name.toLowerCase() === 'install.swm') as FatEntry;
    const firstRuns = await stick.runs(first.cluster, first.size, `${folder}/install.swm`);
    const whole = await wimImages((at, n) => readRuns(iso.readAt, wim.extents, at, n), wim.size, path);
    const split = await wimImages((at, n) => readRuns(drive, firstRuns, at, n), first.size, `${folder}/install.swm`);
    return whole === split ? null : `${folder}/install*.swm hold ${split}, where the ISO's ${path} holds ${whole}`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Walks the ISO's tree and the stick's folders side by side. */
class StickComparison {
  readonly check: StickCheck = { files: 0, bytes: 0, problems: [] };

  constructor(
    private readonly iso: Iso,
    private readonly stick: StickVolume,
    private readonly drive: ReadAt,
  ) {}

  private counted(problem: string | null, bytes: number): void {
    this.check.files += 1;
    this.check.bytes += bytes;
    if (problem !== null) this.check.problems.push(problem);
  }

  /** A file's comparison; a stick whose clusters for it leave the volume is a difference, not an end. */
  private async file(file: DiscEntry, entries: FatEntry[], entry: FatEntry | undefined, path: string): Promise<void> {
    if (file.size > MAX_FAT32_FILE) {
      const parts = entries.filter((e) => /^install\d*\.swm$/i.test(e.name));
      const isWim = path.toLowerCase() === '/sources/install.wim';
      return this.counted(
        isWim ? await checkParts(this.iso, file, parts, this.stick, this.drive, path) : `${path} cannot be on FAT32`,
        file.size,
      );
    }
    if (entry === undefined || (entry.attributes & ATTR_DIRECTORY) !== 0)
      return this.counted(`${path} is not on the stick`, 0);
    if (entry.size !== file.size)
      return this.counted(`${path} has ${entry.size} bytes on the stick, ${file.size} in the ISO`, 0);
    try {
      const runs = await this.stick.runs(entry.cluster, entry.size, path);
      this.counted(await compareFile(this.iso, file, this.drive, runs, path), file.size);
    } catch (error) {
      if (!(error instanceof JobError)) throw error;
      this.counted(error.failure.message, 0);
    }
  }

  async folder(folder: TreeFolder, cluster: number, path: string): Promise<void> {
    const entries = await this.stick.list(cluster, path === '' ? '/' : path);
    const matched = new Set<FatEntry>();
    const find = (name: string): FatEntry | undefined => {
      const entry =
        entries.find((e) => e.name === name) ?? entries.find((e) => e.name.toLowerCase() === name.toLowerCase());
      if (entry !== undefined) matched.add(entry);
      return entry;
    };
    for (const sub of folder.folders) {
      const entry = find(sub.name);
      if (entry === undefined || (entry.attributes & ATTR_DIRECTORY) === 0)
        this.check.problems.push(`${path}/${sub.name}/ is not on the stick`);
      else await this.folder(sub, entry.cluster, `${path}/${sub.name}`);
    }
    for (const file of folder.files) {
      if ('path' in file) continue;
      await this.file(file, entries, find(file.name), `${path}/${file.name}`);
      if (file.size > MAX_FAT32_FILE)
        entries.filter((e) => /^install\d*\.swm$/i.test(e.name)).forEach((e) => matched.add(e));
    }
    for (const entry of entries)
      if (!matched.has(entry)) this.check.problems.push(`${path}/${entry.name} is on the stick, not in the ISO`);
  }
}

/** Compares every file of the ISO with the stick the drive's `drive` reads; throws a sentence when the drive holds no FAT32 stick. */
export async function checkStick(iso: Iso, drive: ReadAt, name: string): Promise<StickCheck> {
  const stick = await StickVolume.open(drive, name);
  const comparison = new StickComparison(iso, stick, drive);
  await comparison.folder(iso.tree, stick.root, '');
  return comparison.check;
}

/** The result's sentence for what differs: the first MAX_NAMED named, the rest counted. */
export function differences(check: StickCheck): string {
  const named = check.problems.slice(0, MAX_NAMED);
  const more = check.problems.length - named.length;
  return `${check.problems.length} of the ISO's files differ on the stick: ${named.join('; ')}${more > 0 ? `; and ${more} more` : ''}.`;
}
