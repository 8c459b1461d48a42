import { closeSync, openSync, statSync } from 'node:fs';
import type { Progress } from '../../common/domain/progress.js';
import type { TargetResult } from '../../common/domain/result.js';
import { flash } from '../../writer/flash.js';
import { assertTestTarget } from './cli.js';

/** Runs the engine in this process on an image file, after checking every target is the test's own. */
export async function flashFile(
  image: string,
  targets: string[],
  options: { verify?: boolean; chunkSize?: number; onProgress?: (p: Progress) => void; signal?: AbortSignal } = {},
): Promise<TargetResult[]> {
  targets.forEach(assertTestTarget);
  const fd = openSync(image, 'r');
  try {
    return await flash({
      source: fd,
      imageSize: statSync(image).size,
      sourceSeekable: true,
      targets,
      verify: options.verify ?? true,
      chunkSize: options.chunkSize,
      onProgress: options.onProgress,
      signal: options.signal,
    });
  } finally {
    closeSync(fd);
  }
}
