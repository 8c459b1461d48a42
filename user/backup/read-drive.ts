/**
 * A few ranges of a drive read as the user, for a reader that wants a file or two rather than an
 * image (a customised card's first-boot report): the helper runs a backup of requested ranges and
 * sends each range asked for, in the order asked; this process parses them. Root parses nothing.
 */
import { helperWithoutResult, type TargetResult } from '../../common/domain/result.js';
import { toFailure } from '../../common/domain/failure.js';
import type { ByteSource } from '../../node/byte-source.js';
import { refuseSource } from '../../writer/source-device.js';
import { currentPlatform } from '../../writer/platform/index.js';
import type { ReadImage } from '../images/free-space/image-reader.js';
import type { ReadAt } from '../../node/read-at.js';
import type { HelperLaunchOptions, LaunchedHelper } from '../launcher/launch.js';
import { askedReader } from './used-blocks.js';

export interface DriveReads {
  drive: string;
  /** Starts the helper with the front end's elevation, given the read job. */
  launch(options: Pick<HelperLaunchOptions, 'job'>): LaunchedHelper;
}

/**
 * `ask`'s answers as a ReadAt: one read at a time, in the order called (the helper sends the
 * ranges in the order asked, on one stream, so two reads at once would take each other's bytes),
 * and reads longer than one question made of several. Short only past the drive's end.
 */
function serialReadAt(ask: ReadImage): ReadAt {
  let queue: Promise<unknown> = Promise.resolve();
  const whole = async (position: number, length: number): Promise<Buffer> => {
    const pieces: Buffer[] = [];
    for (let got = 0; got < length;) {
      const piece = await ask(position + got, length - got);
      if (piece === null || piece.length === 0) break;
      pieces.push(piece);
      got += piece.length;
    }
    return Buffer.concat(pieces);
  };
  return (position, length) => {
    const read = queue.then(() => whole(position, length));
    queue = read.catch(() => undefined);
    return read;
  };
}

/** The drive's size and medium, or the failed result of this process's own look at it (the helper looks again). */
async function lookAt(drive: string): Promise<{ size: number; medium: string | null } | TargetResult> {
  const platform = await currentPlatform();
  try {
    const facts = await platform.inspect(drive);
    const refusal = refuseSource(facts);
    if (refusal !== null) return { status: 'failed', target: drive, bytes: 0, ...refusal };
    return { size: facts.size, medium: await platform.medium(facts) };
  } catch (error) {
    return { status: 'failed', target: drive, bytes: 0, ...toFailure(error) };
  }
}

/**
 * Runs `use` over the drive's bytes, read through the helper; resolves with the helper's result
 * and what `use` returned (null when the drive could not be read, or `use` failed: the result
 * then says why). Never rejects.
 */
export async function readDrive<T>(
  job: DriveReads,
  use: (readAt: ReadAt) => Promise<T>,
): Promise<{ result: TargetResult; value: T | null }> {
  const looked = await lookAt(job.drive);
  if ('status' in looked) return { result: looked, value: null };
  let helper: LaunchedHelper;
  try {
    helper = job.launch({
      job: { kind: 'backup', source: job.drive, size: looked.size, medium: looked.medium, requested: true },
    });
  } catch (error) {
    return { result: { status: 'failed', target: job.drive, bytes: 0, ...toFailure(error) }, value: null };
  }
  let source: ByteSource | null = null;
  try {
    source = (await helper.ready) === null ? null : await helper.driveBytes;
    if (source === null) return { result: await firstResult(helper, job.drive), value: null };
    const value = await use(serialReadAt(askedReader(helper.readRanges.bind(helper), source, looked.size, job.drive)));
    helper.readRanges([], true);
    await source.close();
    source = null;
    const result = await firstResult(helper, job.drive);
    return { result, value: result.status === 'ok' ? value : null };
  } catch (error) {
    // The drive's bytes stopped, or `use` refused them: the helper must not be left waiting for questions.
    helper.cancel();
    await source?.close();
    await helper.result;
    return { result: { status: 'failed', target: job.drive, bytes: 0, ...toFailure(error) }, value: null };
  }
}

async function firstResult(helper: LaunchedHelper, drive: string): Promise<TargetResult> {
  const [result] = await helper.result;
  return result ?? helperWithoutResult(drive, 'reading', 'Nothing was read.');
}
