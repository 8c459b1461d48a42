/**
 * The decoder process: turns an image source (a file or a download, compressed or in a
 * container) into raw image bytes on the descriptor named by its argument (see
 * decoder-launch.ts DecoderOutput), which the privileged helper reads as its fd 0. That is fd 0
 * itself on Linux and macOS: nothing here may touch process.stdin, which would make it
 * non-blocking (and start reading it).
 * It runs with the user's rights, in its own process, so that parsing files from the internet
 * never happens as root and a decoder's memory or crash never touches the helper.
 *
 * The parent sends one DecodePlan over the IPC channel; the decoder answers with progress and
 * exactly one end message (DecoderMessage), then exits, which closes the pipe. The helper waits
 * for that verdict (relayed by the parent) before it writes the partition table.
 */
import { ReaderGone } from './image-sink.js';
import { sendToParent } from '../processes/image-child.js';
import { decodeImage, hashFile } from './decode-image.js';
import type { SourceInput } from './input.js';
import type { DecodePlan, DecoderMessage, SkipAck } from '../../../common/contracts/decoder-protocol.js';
import { jobError, JobError } from '../../../common/domain/failure.js';
import { errorCode, errorText } from '../../../common/domain/error-details.js';

/** Progress reports about the source, at most this often. */
const PROGRESS_INTERVAL_MS = 200;

const send: (message: DecoderMessage) => Promise<void> = sendToParent;

/** What ended the decoding, as the end message says it. */
function endMessage(error: unknown): DecoderMessage {
  if (error instanceof ReaderGone) return { type: 'abandoned' };
  if (error instanceof JobError) return { type: 'end', ok: false, ...error.failure };
  const code = errorCode(error);
  if (code === 'ENOENT')
    return {
      type: 'end',
      ok: false,
      code: 'source-read-error',
      message: `The image file disappeared while it was being read: ${errorText(error)}.`,
    };
  return {
    type: 'end',
    ok: false,
    code: 'source-read-error',
    message: `Reading the image failed: ${errorText(error)}.`,
  };
}

/** Where the image goes; see decoder-launch.ts. */
const OUT_FD = Number(process.argv[2]);

/** Resolves the skip the parent has yet to acknowledge: one at a time, the sink waits for each. */
let acknowledge: (() => void) | null = null;

async function run(plan: DecodePlan): Promise<void> {
  // A local file's checksum is taken in a second read alongside the decoding (the page cache
  // serves both); a download's is taken on the way, since it can be read only once.
  // An image the helper reads itself (raw, sendImage off) is its own decoded image: one hash checks both.
  const imageSha256 = plan.imageSha256 ?? null;
  const fileDigest =
    (plan.sha256 !== null || (imageSha256 !== null && !plan.sendImage)) && plan.location.kind === 'file'
      ? hashFile(plan.location.path)
      : null;
  fileDigest?.catch(() => undefined);
  let input: SourceInput | null = null;
  const progress = setInterval(() => {
    if (input !== null) void send({ type: 'progress', sourceBytes: input.bytesRead(), queued: input.queued() });
  }, PROGRESS_INTERVAL_MS);
  let message: DecoderMessage;
  try {
    const decoded = plan.sendImage
      ? await decodeImage(plan, OUT_FD, {
          started: (decoder) => void send({ type: 'started', decoder }),
          input: (opened) => (input = opened),
          skip: (extents, reason) =>
            new Promise<void>((resolve) => {
              acknowledge = resolve;
              void send({ type: 'skip', extents, reason });
            }),
          notice: (text) => void send({ type: 'notice', message: text }),
        })
      : { bytes: null, sourceDigest: null, imageDigest: null };
    const digest = fileDigest !== null ? await fileDigest : decoded.sourceDigest;
    if (plan.sha256 !== null && digest !== plan.sha256.toLowerCase()) {
      throw jobError(
        'source-checksum-mismatch',
        `The image's SHA-256 is ${digest ?? 'unknown'}, but ${plan.sha256From ?? 'the expected checksum'} says ${plan.sha256.toLowerCase()}: the file is damaged (a bad download?) or it is another image.`,
      );
    }
    const imageDigest = plan.sendImage ? decoded.imageDigest : digest;
    if (imageSha256 !== null && imageDigest !== imageSha256.toLowerCase()) {
      throw jobError(
        'source-checksum-mismatch',
        `The decompressed image's SHA-256 is ${imageDigest ?? 'unknown'}, but the catalogue says ${imageSha256.toLowerCase()} (extract_sha256): the download is damaged, or the catalogue names another image.`,
      );
    }
    await (input as SourceInput | null)?.commit();
    message = { type: 'end', ok: true, bytes: decoded.bytes, sha256: digest };
  } catch (error) {
    message = endMessage(error);
    // Wrong bytes are not kept to be resumed: the next try downloads them again.
    if (
      error instanceof JobError &&
      (error.failure.code === 'source-checksum-mismatch' || error.failure.code === 'source-corrupt')
    )
      await (input as SourceInput | null)?.discard().catch(() => undefined);
  } finally {
    clearInterval(progress);
  }
  // The last count, before the end: a download that ends between two ticks (a 5 MB image on a
  // fast network takes under 200 ms since free space is left out) is reported to its last byte.
  const opened = input as SourceInput | null;
  if (opened !== null) await send({ type: 'progress', sourceBytes: opened.bytesRead(), queued: opened.queued() });
  await send(message);
  process.exit(0);
}

// Ctrl-C in a terminal reaches the whole process group; the parent decides what it means and
// stops this process itself. Without the parent there is no one to decode for.
process.on('SIGINT', () => undefined);
process.on('disconnect', () => process.exit(0));
process.once('message', (plan: DecodePlan) => {
  process.on('message', (ack: SkipAck) => {
    if (ack.type !== 'skip-ack') return;
    const resolve = acknowledge;
    acknowledge = null;
    resolve?.();
  });
  void run(plan);
});
