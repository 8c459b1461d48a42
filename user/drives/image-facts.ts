import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Drive } from '../../common/domain/drive.js';
import { findImageDrive, type ImageFacts } from '../../common/domain/verdict.js';

/**
 * What the verdicts need to know about an image file: how many bytes it puts on a drive (`size`:
 * the decoded size or its lower bound, null while unknown) and which of `drives` stores the file,
 * found through its real path (symlinks resolved) and the drives' mountpoints.
 */
export async function imageFacts(
  path: string,
  size: Pick<ImageFacts, 'size' | 'atLeast'>,
  drives: readonly Drive[],
): Promise<ImageFacts> {
  const real = await realpath(path).catch(() => resolve(path));
  return { ...size, storedOn: findImageDrive(real, drives) };
}
