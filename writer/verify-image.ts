import type { Progress } from '../common/domain/progress.js';
import type { TargetResult } from '../common/domain/result.js';
import { judgeDrive, refusalFailure } from '../common/domain/verdict.js';
import { DEFAULT_CHUNK } from './flash.js';
import { alignUp, allocateJobMemory } from './job-memory.js';
import { sourceReadFailure, targetReadFailure, toFailure } from './failures.js';
import { closeFd, openFd, readFully } from '../node/io.js';
import { currentPlatform } from './platform/index.js';
import type { DevicePlatform } from './platform/types.js';
import { ProgressMeter } from './progress-meter.js';
import { safetyFacts } from './target-check.js';
import type { WriteTarget } from './write-target.js';

/** A verify-only job: compare a device that was written earlier against the image, writing nothing. */
export interface VerifyImageJob {
  source: number;
  imageSize: number | null;
  target: string;
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: Progress) => void) | undefined;
  platform?: DevicePlatform | undefined;
  /** Refuse anything but a disk: the helper reads as root, and a file is its owner's to compare. */
  disksOnly?: boolean | undefined;
}

/**
 * Reads the image and the device side by side, bypassing the page cache on the device, and names
 * the exact first byte that differs. The one buffer is split into an image half and a device half.
 */
export async function verifyImage(job: VerifyImageJob): Promise<TargetResult> {
  const platform = job.platform ?? (await currentPlatform());
  const started = performance.now();
  const facts = await platform.inspect(job.target);
  const target = job.target;
  if (!facts.exists) return { status: 'failed', target, bytes: 0, code: 'target-not-found', message: `${target} does not exist: was the drive unplugged?` };
  if (job.disksOnly === true && !facts.isBlockDevice) return { status: 'failed', target, bytes: 0, code: 'target-not-block-device', message: `${target} is not a disk; compare a file without administrator rights.` };
  const tooSmall = judgeDrive(safetyFacts(facts), { size: job.imageSize, storedOn: null }).find((v) => v.kind === 'too-small');
  if (facts.isBlockDevice && tooSmall !== undefined) return { status: 'failed', target, bytes: 0, ...refusalFailure(tooSmall) };
  let fd: number;
  try {
    fd = await openFd(facts.rawPath, platform.readFlags);
  } catch (error) {
    return { status: 'failed', target, bytes: 0, ...targetReadFailure(target, error, 0).failure };
  }
  const reader: TargetReader = {
    path: target,
    read: (buffer, offset, length, position) => readFully(fd, buffer, offset, alignUp(length, facts.logicalBlockSize), position).then((got) => Math.min(got, length)),
  };
  try {
    return await compareWithImage({ ...job, started }, reader);
  } finally {
    await closeFd(fd);
  }
}

/** What compareWithImage reads: a target's bytes, past any cache (see WriteTarget.read). */
export type TargetReader = Pick<WriteTarget, 'path' | 'read'>;

/**
 * Reads the image and the target side by side and names the exact first byte that differs. The
 * one buffer is split into an image half and a target half. Used by `sluice verify` and to verify
 * a file that the kernel copied (user/files/flash-to-file.ts), whose bytes never passed through a hash.
 */
export async function compareWithImage(job: Pick<VerifyImageJob, 'source' | 'imageSize' | 'signal' | 'onProgress'> & { started: number }, reader: TargetReader): Promise<TargetResult> {
  const target = reader.path;
  const memory = allocateJobMemory(2 * DEFAULT_CHUNK).bytes;
  const image = memory.subarray(0, DEFAULT_CHUNK);
  const device = memory.subarray(DEFAULT_CHUNK);
  const meter = new ProgressMeter('verifying', target, job.imageSize, (p) => job.onProgress?.(p));
  let position = 0;
  let badBytes = 0;
  let firstBad = -1;
  try {
    for (;;) {
      if (job.signal?.aborted) return { status: 'cancelled', target, bytes: position };
      let n: number;
      try {
        n = await readFully(job.source, image, 0, DEFAULT_CHUNK, null);
      } catch (error) {
        throw sourceReadFailure(position, error);
      }
      if (n === 0) break;
      let got: number;
      try {
        got = await reader.read(device, 0, n, position);
      } catch (error) {
        throw targetReadFailure(target, error, position);
      }
      if (got < n) {
        return { status: 'failed', target, bytes: position, code: 'verify-mismatch', message: `${target} ends at byte offset ${position + got}, before the image does.`, offset: position + got };
      }
      if (image.compare(device, 0, n, 0, n) !== 0) {
        for (let i = 0; i < n; i++) {
          if (image[i] !== device[i]) {
            badBytes += 1;
            if (firstBad < 0) firstBad = position + i;
          }
        }
      }
      position += n;
      meter.update(position);
    }
  } catch (error) {
    return { status: 'failed', target, bytes: position, ...toFailure(error) };
  }
  meter.finish();
  if (job.imageSize !== null && position !== job.imageSize) {
    return { status: 'failed', target, bytes: position, code: 'source-truncated', message: `The image ended after ${position} of its ${job.imageSize} bytes.`, offset: position };
  }
  if (firstBad >= 0) {
    return {
      status: 'failed',
      target,
      bytes: position,
      code: 'verify-mismatch',
      message: `${target} differs from the image: ${badBytes === 1 ? '1 byte differs' : `${badBytes} bytes differ`}, the first at byte offset ${firstBad}.`,
      offset: firstBad,
    };
  }
  return { status: 'ok', target, bytes: position, written: false, verified: true, seconds: (performance.now() - job.started) / 1000 };
}