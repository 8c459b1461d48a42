import type { Progress } from '../../common/domain/progress.js';
import type { TargetResult } from '../../common/domain/result.js';
import { JobError, jobError, toFailure } from '../../common/domain/failure.js';
import { discarded, FileTarget } from './file-target.js';
import { writeTargets, type FlashJob, type WriteJob } from '../../writer/flash.js';
import { streamLayoutOf } from '../../writer/stream-layout.js';
import { ProgressMeter } from '../../writer/progress-meter.js';
import { waitForSourceEnd } from '../../writer/source-end.js';
import { compareWithImage } from '../../writer/verify-image.js';
import { errorText } from '../../common/domain/error-details.js';

/** One image written to a regular file: decompressed, mapped or copied as it is. */
export interface FileFlashJob extends WriteJob {
  /** The file to write; see file-target.ts for what may be named. */
  target: string;
  /** The block map's ranges: only they are written, the rest of the file is left as holes. */
  extents?: FlashJob['extents'];
  /**
   * The raw image file `source` was opened from, when the bytes need no decoding and no block
   * map applies: the kernel copies it (FileTarget.copyOf), and verification compares the two files.
   */
  sourcePath?: string | null | undefined;
}

function failed(target: string, bytes: number, error: unknown): Extract<TargetResult, { status: 'failed' }> {
  return { status: 'failed', target, bytes, ...toFailure(error) };
}

/**
 * Writes an image to a regular file and verifies it; no privileges, no helper. Resolves with the
 * file's result; never rejects. Only a verified file gets its name (see FileTarget).
 */
export async function flashToFile(job: FileFlashJob): Promise<TargetResult> {
  const kernelCopy = job.sourcePath !== undefined && job.sourcePath !== null && job.extents === undefined;
  let file: FileTarget;
  let result: TargetResult;
  try {
    if (kernelCopy) {
      const started = performance.now();
      const meter = new ProgressMeter('writing', job.target, job.imageSize, (p) => job.onProgress?.(p));
      file = await FileTarget.copyOf(job.sourcePath ?? '', job.target, (bytes) => meter.update(bytes));
      meter.finish();
      result = await verifyCopy(job, file, started);
    } else {
      const layout = streamLayoutOf(job);
      file = await FileTarget.create(job.target, job.imageSize, job.extents !== undefined);
      try {
        result =
          (await writeTargets(job, layout, [file])).get(job.target) ?? failed(job.target, 0, new Error('no result'));
      } finally {
        await file.close();
      }
    }
  } catch (error) {
    return failed(job.target, 0, error);
  }
  if (result.status !== 'ok') return discarded(result, await file.discard());
  try {
    await file.commit();
  } catch (error) {
    const left = await file.discard();
    const failure = failed(
      job.target,
      result.bytes,
      jobError(
        'write-error',
        `${job.target} was written and verified as ${FileTarget.partialPath(job.target)}, but could not be renamed: ${errorText(error)}`,
      ),
    );
    return discarded(failure, left);
  }
  return result;
}

/** After a kernel copy: the source side's verdict (a checksum checked alongside), then both files compared. */
async function verifyCopy(job: FileFlashJob, file: FileTarget, started: number): Promise<TargetResult> {
  try {
    await file.sync();
    if (job.sourceEnd !== undefined) {
      const end = await waitForSourceEnd(job.sourceEnd, job.signal);
      if (end === null) return { status: 'cancelled', target: job.target, bytes: 0 };
      if (!end.ok) throw new JobError(end.failure);
    }
    if (job.signal?.aborted) return { status: 'cancelled', target: job.target, bytes: 0 };
    if (!job.verify)
      return {
        status: 'ok',
        target: job.target,
        bytes: job.imageSize ?? 0,
        written: true,
        verified: false,
        seconds: (performance.now() - started) / 1000,
      };
    const onProgress = (p: Progress) => job.onProgress?.(p);
    const compared = await compareWithImage(
      { source: job.source, imageSize: job.imageSize, signal: job.signal, onProgress, started },
      file,
    );
    return compared.status === 'ok' ? { ...compared, written: true } : compared;
  } catch (error) {
    return failed(job.target, 0, error);
  } finally {
    await file.close();
  }
}
