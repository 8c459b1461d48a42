/**
 * A Windows image (sources/install.wim) over FAT32's 4 GiB - 1 byte, split into install.swm,
 * install2.swm, … as DISM /Split-Image and `wimlib-imagex split` make them (Windows Setup reads
 * them). The split is wimlib-imagex's, run as the user in a private temporary folder: the WIM is
 * copied out of the ISO there first (the tool reads a file, not a range of one), split, and the
 * copy deleted. Before anything is written, the parts are checked: `wimlib-imagex verify` reads
 * every blob of every part and checks its SHA-1, and the parts must hold the images the WIM held,
 * of the same sizes. The header is looked at first, so a WIM whose header lies is refused before
 * gigabytes are copied.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { constants } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jobError, JobError } from '../../common/domain/failure.js';
import { closeFd, openFd, writeFully } from '../../node/io.js';
import { findTool, runTool } from '../../node/run-tool.js';
import type { ReadAt } from '../../node/read-at.js';
import { readExactly, type DiscEntry } from '../iso/volume.js';
import { MAX_FAT32_FILE, type MadeFile } from './tree.js';

/** Each part's size, as wimlib-imagex takes it (MiB): below 4 GiB with room for a blob that does not divide. */
const PART_MIB = 3800;
const HEADER_BYTES = 208;
/** A real WIM holds a few dozen images at most (Windows editions); a header claiming more lies. */
const MAX_IMAGES = 1000;
/** Copying and splitting 5 GiB takes about a minute here; an hour means something is stuck. */
const TOOL_TIMEOUT_MS = 60 * 60 * 1000;
const COPY_BYTES = 4 * 1024 * 1024;

export interface SplitWim {
  parts: MadeFile[];
  /** Removes the parts' folder. */
  dispose(): Promise<void>;
}

/** What is wrong with a WIM header, judged against the file's size; null when it holds together. */
function headerProblem(header: Buffer, size: number): string | null {
  if (header.toString('latin1', 0, 8) !== 'MSWIM\0\0\0') return 'it does not start as a WIM does ("MSWIM")';
  if (header.readUInt32LE(8) !== HEADER_BYTES)
    return `its header says it is ${header.readUInt32LE(8)} bytes long, where a WIM header is ${HEADER_BYTES}`;
  if (header.readUInt16LE(42) !== 1)
    return `it is part ${header.readUInt16LE(40)} of ${header.readUInt16LE(42)} of a split WIM already`;
  const images = header.readUInt32LE(44);
  if (images === 0 || images > MAX_IMAGES) return `its header claims ${images} images`;
  for (const [name, at] of [
    ['blob table', 48],
    ['XML data', 72],
    ['integrity table', 124],
  ] as const) {
    const length = Number(header.readBigUInt64LE(at) & 0x00ffffffffffffffn);
    const offset = Number(header.readBigUInt64LE(at + 8));
    if ((length !== 0 || name !== 'integrity table') && offset + length > size)
      return `its header puts its ${name} at byte ${offset} (${length} bytes), past its end at ${size}`;
  }
  return null;
}

/** Copies the WIM's bytes out of the ISO into `path`. */
async function copyOut(file: DiscEntry, readAt: ReadAt, image: string, path: string): Promise<void> {
  const fd = await openFd(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL);
  try {
    for (const [offset, length] of file.extents) {
      for (let at = offset; at < offset + length; at += COPY_BYTES) {
        const piece = await readExactly(readAt, at, Math.min(COPY_BYTES, offset + length - at), image);
        await writeFully(fd, piece, 0, piece.length, null);
      }
    }
  } finally {
    await closeFd(fd);
  }
}

/** "Image Count" and each image's "Total Bytes", as `wimlib-imagex info` prints them. */
async function imagesOf(tool: string, wim: string): Promise<string> {
  const info = await runTool(tool, ['info', wim], TOOL_TIMEOUT_MS);
  return [...info.matchAll(/^(Image Count|Total Bytes):\s*(\d+)$/gm)].map((m) => `${m[1]} ${m[2]}`).join(', ');
}

/** wimlib-imagex, or a sentence that says what it was needed for (`need`) and which package to install. */
export async function wimTool(need: string): Promise<string> {
  const tool = await findTool('wimlib-imagex');
  if (tool !== null) return tool;
  throw jobError(
    'unsupported-format',
    `${need} needs wimlib-imagex: install the package wimtools (Debian, Ubuntu), wimlib-utils (Fedora) or wimlib (Homebrew), then try again.`,
  );
}

/** Splits the ISO's install.wim into checked parts in a private folder. */
export async function splitWim(file: DiscEntry, readAt: ReadAt, image: string): Promise<SplitWim> {
  const header = file.inline ?? (await readExactly(readAt, file.extents[0]?.[0] ?? 0, HEADER_BYTES, image));
  const problem = headerProblem(header, file.size);
  if (problem !== null)
    throw jobError(
      'source-corrupt',
      `${image} holds a sources/install.wim that is damaged: ${problem}. Sluice does not split it.`,
    );
  const tool = await wimTool(
    `${image} holds sources/install.wim of ${file.size} bytes, over FAT32's 4 GiB - 1 byte, and splitting it`,
  );
  const dir = await mkdtemp(join(tmpdir(), 'sluice-wim-'));
  const dispose = () => rm(dir, { recursive: true, force: true });
  try {
    const wim = join(dir, 'install.wim');
    await copyOut(file, readAt, image, wim);
    const whole = await imagesOf(tool, wim);
    await runTool(tool, ['split', wim, join(dir, 'install.swm'), String(PART_MIB)], TOOL_TIMEOUT_MS);
    await rm(wim);
    const first = join(dir, 'install.swm');
    await runTool(tool, ['verify', first, `--ref=${join(dir, 'install*.swm')}`], TOOL_TIMEOUT_MS);
    const split = await imagesOf(tool, first);
    if (split !== whole)
      throw jobError(
        'source-corrupt',
        `The parts wimlib-imagex split ${image}'s install.wim into do not hold what it held (${split}, not ${whole}); nothing was written.`,
      );
    const names = (await readdir(dir))
      .filter((name) => /^install\d*\.swm$/.test(name))
      .sort((a, b) => partNumber(a) - partNumber(b));
    const parts = await Promise.all(
      names.map(async (name) => ({ name, size: (await stat(join(dir, name))).size, path: join(dir, name) })),
    );
    const big = parts.find((part) => part.size > MAX_FAT32_FILE);
    if (big !== undefined)
      throw jobError(
        'unsupported-format',
        `${image}'s install.wim holds a piece too large to split below 4 GiB (${big.name} is ${big.size} bytes).`,
      );
    return { parts, dispose };
  } catch (error) {
    await dispose();
    if (error instanceof JobError || !(error instanceof Error)) throw error;
    throw jobError('source-corrupt', `${image}'s install.wim could not be split: ${error.message}`);
  }
}

/** install.swm is part 1, installN.swm part N. */
function partNumber(name: string): number {
  return Number(/^install(\d*)\.swm$/.exec(name)?.[1] || '1');
}
