import { sourceStage, type SourceStage } from '../../../common/app/bottleneck.js';
import type { Readable } from 'node:stream';
import type { HelperJobOf } from '../../../common/contracts/helper-protocol.js';
import { extentBytes } from '../../../common/domain/extents.js';
import { reachedDrive, saysDriveIncomplete, type SourceEnd, type TargetResult } from '../../../common/domain/result.js';
import { REFUSAL_CODES, type Failure } from '../../../common/domain/failure.js';
import { tallySkipped, type Skipped } from '../../../common/domain/skipped.js';
import { writtenExtents, type LeaveOut } from './written-extents.js';
import { invokingUser } from '../processes/image-child.js';
import {
  startDecoder,
  type DecoderOutput,
  type OnSkip,
  type RunningDecoder,
  type WarmDecoder,
} from '../processes/decoder-launch.js';
import { closeFd } from '../../../node/io.js';
import { openProbedFile } from '../probe/probed-file.js';
import type { PreparedImage } from '../probe/probe.js';
import { rereadImage, type ImageReread } from './reread.js';

/**
 * Where the feed's word on the stream goes: the helper (a LaunchedHelper is one), or a job run in
 * this process.
 */
export interface StreamListener {
  /** How the stream ended on this side. */
  endSource(end: SourceEnd): void;
  /** The stream leaves out `extents` from here on; resolves once the job has them in place. */
  skip(extents: [number, number][]): Promise<void>;
  /** Answers requests for the image's bytes again (a repair of a stream) through `reread`; absent where none can come. */
  answerRepairs?(reread: ImageReread): void;
}

/** The image, flowing: what the helper reads, and what its job message must say about it. */
export interface SourceFeed {
  /** The helper's fd 0: the image file itself, or the decoder's pipe. */
  readonly source: number | Readable;
  /** The source is the file handed over as FeedOptions.opened. */
  readonly fromOpened: boolean;
  readonly start: Pick<
    HelperJobOf<'flash'>,
    'imageSize' | 'sourceSeekable' | 'extents' | 'awaitSourceEnd' | 'sourceGrows'
  >;
  /** How the image is read: "read directly" or the decoder that runs. */
  readonly decoder: Promise<string>;
  /** Source bytes read so far (a download's progress). */
  sourceBytes(): number;
  /** What feeds the writer now: what its progress says it waits for when the source is the bottleneck. */
  stage(): SourceStage;
  /** Calls `listener` with what the decoder tells the person flashing (a dropped download resumed). */
  onNotice(listener: (message: string) => void): void;
  /**
   * Relays the decoder's verdict and the ranges it leaves out (to the job), waits for the job's
   * results, stops the decoder, and returns the results with the source's own failure in place of
   * what the job could see of it, and with the reasons for what was left out (skippedFor: the
   * block map and the free space found before the start and by the decoder since).
   */
  finish(results: Promise<TargetResult[]>, to: StreamListener): Promise<TargetResult[]>;
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

/** `results` with the reasons for what each ok one left out, when it left anything out. */
function withSkipReasons(results: readonly TargetResult[], skipped: readonly Skipped[]): TargetResult[] {
  const reasons = skipped.filter((s) => s.bytes > 0).map((s) => ({ ...s }));
  return results.map((r) =>
    r.status === 'ok' && r.skipped !== undefined && reasons.length > 0 ? { ...r, skippedFor: reasons } : r,
  );
}

/**
 * The listener of a job that leaves no free space out, as a file target's does (its feed is
 * opened with leaveOut 'unmapped'): the decoder looks for none, so a skip can only be a mistake.
 */
export function wholeImageListener(endSource: (end: SourceEnd) => void): StreamListener {
  return { endSource, skip: () => Promise.reject(new Error('a file is written whole: nothing may be left out of it')) };
}

/** How the feed is opened. */
export interface FeedOptions {
  output?: DecoderOutput | undefined;
  /** What the job may leave out of the image; 'all' (free space and what a block map leaves out) by default. */
  leaveOut?: LeaveOut | undefined;
  /** A decoder process started while the image was probed: run on the plan if it fits, else stopped. */
  warm?: WarmDecoder | undefined;
  /**
   * The image file, opened while it was probed (for a helper started ahead of its job): the feed
   * owns it from here. Used, after the same checks as a file opened now, where the helper reads the
   * file itself (and closed with the feed); else closed at once.
   */
  opened?: number | undefined;
  /**
   * Where a batch decodes its image once (ImageCache.decodedCopy): an image that goes through a
   * decoder is decoded into that copy instead of a pipe, as fast as the decoder goes, and every
   * card reads it as it grows (writer/growing-source.ts); a card that falls behind the others
   * reads it again instead of holding them back. Where the copy would not fit, the notice says so
   * and the batch streams, as one card does.
   */
  decodeOnce?: ((bytes: number) => Promise<{ write: number; read: number } | { refused: string }>) | undefined;
}

/** Relays the decoder's skips to the job once it is there, counting what is left out. */
class SkipRelay {
  readonly skipped: Skipped[];
  private listener: StreamListener | null = null;
  private readonly waiting: { extents: [number, number][]; resolve: () => void }[] = [];

  constructor(before: Skipped[]) {
    this.skipped = before;
  }

  readonly onSkip: OnSkip = (extents, reason) => {
    tallySkipped(this.skipped, reason, extentBytes(extents));
    if (this.listener !== null) return this.listener.skip(extents);
    return new Promise((resolve) => this.waiting.push({ extents, resolve }));
  };

  connect(listener: StreamListener): void {
    this.listener = listener;
    for (const { extents, resolve } of this.waiting.splice(0)) void listener.skip(extents).then(resolve);
  }
}

/**
 * Opens the prepared image for a flash: the file itself, a decoder, or both (a checksum to check
 * alongside). Under sudo this process is root, so it opens no image at all: the decoder, running as
 * the invoking user (image-child.ts), reads even a raw file and streams it, and the file is then
 * read with that user's rights only.
 */
export async function openSourceFeed(prepared: PreparedImage, options: FeedOptions = {}): Promise<SourceFeed> {
  const { location } = prepared.plan;
  const direct = prepared.direct && invokingUser() === null;
  const file =
    direct && location.kind === 'file' && prepared.identity !== null
      ? await openProbedFile(location.path, prepared.identity, options.opened)
      : null;
  if (options.opened !== undefined && file === null) await closeFd(options.opened);
  const leaveOut = options.leaveOut ?? 'all';
  const written = writtenExtents(prepared, leaveOut);
  const map =
    written.extents === null
      ? null
      : {
          ...(prepared.plan.map ?? { ranges: [], digestAlgorithm: 'sha256' as const, name: 'the free space' }),
          extents: written.extents,
        };
  // A decoder beside a file the helper reads itself only checks the file's SHA-256.
  const plan = {
    ...prepared.plan,
    map,
    sendImage: file === null,
    freeSpace: file === null && prepared.plan.freeSpace && leaveOut === 'all',
  };
  const relay = new SkipRelay(written.skipped);
  let decoder: RunningDecoder | null = null;
  const listeners: ((message: string) => void)[] = [];
  const notices: string[] = [];
  const copy =
    file === null && options.decodeOnce !== undefined ? await options.decodeOnce(prepared.imageSize ?? 0) : null;
  if (copy !== null && 'refused' in copy)
    notices.push(`The image is decoded for each card as it is written, not once for all of them: ${copy.refused}.`);
  const once = copy !== null && 'read' in copy ? copy : null;
  try {
    // A raw image the helper reads itself still has a decoder beside it when a checksum must be checked.
    const checked = plan.sha256 !== null || (plan.imageSha256 ?? null) !== null;
    const output = once !== null ? { file: once.write } : (options.output ?? 'stream');
    decoder =
      file === null || checked
        ? await startDecoder(
            plan,
            output,
            relay.onSkip,
            (message) => listeners.forEach((listener) => listener(message)),
            options.warm,
          )
        : null;
  } catch (error) {
    if (file !== null) await closeFd(file);
    if (once !== null) await closeFd(once.read);
    throw error;
  } finally {
    await options.warm?.dispose();
    // The decoder holds its own descriptor of the copy.
    if (once !== null) await closeFd(once.write);
  }
  const source = file ?? once?.read ?? decoder?.source;
  if (source === undefined || source === null) throw new Error('no image source');
  const running = decoder;
  const close = async () => {
    await running?.stop();
    if (file !== null) await closeFd(file);
    if (once !== null) await closeFd(once.read);
  };
  return {
    source,
    fromOpened: file !== null && file === options.opened,
    start: {
      imageSize: prepared.imageSize,
      sourceSeekable: file !== null,
      ...(written.extents !== null ? { extents: written.extents } : {}),
      ...(running !== null ? { awaitSourceEnd: true } : {}),
      ...(once !== null ? { sourceGrows: true } : {}),
    },
    decoder:
      running === null
        ? Promise.resolve('read directly')
        : file !== null
          ? Promise.resolve('read directly, SHA-256 checked alongside')
          : once !== null
            ? running.decoder.then((name) => `${name}, decoded once for every card`)
            : running.decoder,
    sourceBytes: () => running?.sourceBytes() ?? 0,
    stage: () => sourceStage(location.kind, prepared.info.format, running?.decoderBehind() ?? false),
    onNotice: (listener) => {
      listeners.push(listener);
      for (const message of notices.splice(0)) listener(message);
    },
    finish: async (pending, to) => {
      relay.connect(to);
      to.answerRepairs?.(rereadImage(prepared.plan));
      void running?.ended.then((end) => {
        if (end.status === 'ok') to.endSource({ ok: true, bytes: end.bytes });
        else if (end.status === 'failed') to.endSource({ ok: false, failure: end.failure });
      });
      const results = await pending;
      await close();
      const end = await running?.ended;
      return end?.status === 'failed'
        ? withSourceFailure(results, end.failure)
        : withSkipReasons(results, relay.skipped);
    },
    close,
  };
}
