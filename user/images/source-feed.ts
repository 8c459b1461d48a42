import type { Readable } from 'node:stream';
import type { HelperJobOf } from '../../common/contracts/helper-protocol.js';
import { reachedDrive, saysDriveIncomplete, type SourceEnd, type TargetResult } from '../../common/domain/result.js';
import { REFUSAL_CODES, type Failure } from '../../common/domain/failure.js';
import { invokingUser } from './image-child.js';
import { startDecoder, type DecoderOutput, type RunningDecoder } from './decoder-launch.js';
import { closeFd } from '../../node/io.js';
import { openProbedFile } from './probed-file.js';
import type { PreparedImage } from './probe.js';

/** The image, flowing: what the helper reads, and what its job message must say about it. */
export interface SourceFeed {
  /** The helper's fd 0: the image file itself, or the decoder's pipe. */
  readonly source: number | Readable;
  readonly start: Pick<HelperJobOf<'flash'>, 'imageSize' | 'sourceSeekable' | 'extents' | 'awaitSourceEnd'>;
  /** How the image is read: "read directly" or the decoder that runs. */
  readonly decoder: Promise<string>;
  /** Source bytes read so far (a download's progress). */
  sourceBytes(): number;
  /** Calls `listener` with what the decoder tells the person flashing (a dropped download resumed). */
  onNotice(listener: (message: string) => void): void;
  /**
   * Relays the decoder's verdict (to the helper job's endSource), waits for the job's results,
   * stops the decoder, and returns the results with the source's own failure in place of what
   * the job could see of it.
   */
  finish(results: Promise<TargetResult[]>, endSource: (end: SourceEnd) => void): Promise<TargetResult[]>;
  /** For a job that never started: stops the decoder and closes the image. */
  close(): Promise<void>;
}

/**
 * A failed source is the reason for a failed job: the helper only sees a pipe that ended early
 * (or not at all). Refusals and cancellations stand: nothing was written, or the user stopped it.
 * Whether bytes reached a drive only the helper knows; its result says so, and the source's
 * reason keeps it.
 */
export function withSourceFailure(results: readonly TargetResult[], failure: Failure): TargetResult[] {
  return results.map((r) => {
    if (r.status === 'cancelled' || (r.status === 'failed' && REFUSAL_CODES.has(r.code))) return r;
    const failed: TargetResult = { status: 'failed', target: r.target, bytes: r.bytes, ...failure };
    return r.status === 'ok' || saysDriveIncomplete(r) ? reachedDrive(failed) : failed;
  });
}

/**
 * Opens the prepared image for a flash: the file itself, a decoder, or both (a checksum to check
 * alongside). Under sudo this process is root, so it opens no image at all: the decoder, running as
 * the invoking user (image-child.ts), reads even a raw file and streams it, and the file is then
 * read with that user's rights only.
 */
export async function openSourceFeed(prepared: PreparedImage, output: DecoderOutput = 'stream'): Promise<SourceFeed> {
  const { location } = prepared.plan;
  const direct = prepared.direct && invokingUser() === null;
  const plan = direct ? prepared.plan : { ...prepared.plan, sendImage: true };
  const file = direct && location.kind === 'file' && prepared.identity !== null ? await openProbedFile(location.path, prepared.identity) : null;
  let decoder: RunningDecoder | null = null;
  const listeners: ((message: string) => void)[] = [];
  try {
    // A raw image the helper reads itself still has a decoder beside it when a checksum must be checked.
    const checked = plan.sha256 !== null || (plan.imageSha256 ?? null) !== null;
    decoder = file === null || checked ? await startDecoder(plan, output, (message) => listeners.forEach((listener) => listener(message))) : null;
  } catch (error) {
    if (file !== null) await closeFd(file);
    throw error;
  }
  const source = file ?? decoder?.source;
  if (source === undefined || source === null) throw new Error('no image source');
  const running = decoder;
  const close = async () => {
    await running?.stop();
    if (file !== null) await closeFd(file);
  };
  return {
    source,
    start: {
      imageSize: prepared.imageSize,
      sourceSeekable: file !== null,
      ...(prepared.extents !== null ? { extents: prepared.extents } : {}),
      ...(running !== null ? { awaitSourceEnd: true } : {}),
    },
    decoder: running === null ? Promise.resolve('read directly') : file !== null ? Promise.resolve('read directly, SHA-256 checked alongside') : running.decoder,
    sourceBytes: () => running?.sourceBytes() ?? 0,
    onNotice: (listener) => void listeners.push(listener),
    finish: async (pending, endSource) => {
      void running?.ended.then((end) => {
        if (end.status === 'ok') endSource({ ok: true, bytes: end.bytes });
        else if (end.status === 'failed') endSource({ ok: false, failure: end.failure });
      });
      const results = await pending;
      await close();
      const end = await running?.ended;
      return end?.status === 'failed' ? withSourceFailure(results, end.failure) : results;
    },
    close,
  };
}
