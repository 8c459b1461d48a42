import { lstat, stat } from 'node:fs/promises';
import { JobError } from '../../common/domain/failure.js';
import { checkFileTargetPath } from '../../user/files/file-target.js';
import { flashToFile } from '../../user/files/flash-to-file.js';
import { overlayPieces } from '../../user/customise/prepare.js';
import { FileTarget } from '../../user/files/file-target.js';
import { sourceEndSignal } from '../../writer/source-end.js';
import type { PreparedImage } from '../../user/images/probe/probe.js';
import { openSourceFeed, wholeImageListener } from '../../user/images/feed/source-feed.js';
import { cancelOnSigint } from '../cancel.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { confirm } from '../prompt.js';
import { createReporter, reportOne } from '../reporter.js';
import { staged } from '../../common/app/bottleneck.js';

export interface FileFlashArgs {
  image: string;
  target: string;
  verify: boolean;
  yes: boolean;
  json: boolean;
}

/** The image file and the target are one file: writing would destroy the image as it is read. */
async function sameFile(image: string, target: string): Promise<boolean> {
  const [a, b] = await Promise.all([stat(image).catch(() => null), stat(target).catch(() => null)]);
  return a !== null && b !== null && a.dev === b.dev && a.ino === b.ino;
}

/**
 * An existing file is replaced only when the user says so (--yes, or yes at the terminal).
 * Returns the exit code when it is not to be replaced, null when the job may go on.
 */
export async function confirmReplace(target: string, yes: boolean): Promise<number | null> {
  const exists = (await lstat(target).catch(() => null)) !== null;
  if (!exists || yes) return null;
  if (process.stdin.isTTY !== true) {
    process.stderr.write(`sluice: ${target} exists; pass --yes to replace it when running without a terminal.\n`);
    return EXIT.usage;
  }
  if (await confirm(`Replace ${target}?`)) return null;
  process.stderr.write('Nothing was written.\n');
  return EXIT.cancelled;
}

/**
 * `sluice flash IMAGE FILE`: the image decoded (or copied as it is) into a regular file, then
 * read back and compared. Runs entirely as the invoking user: no helper, no root.
 */
export async function flashToFileCommand(prepared: PreparedImage, args: FileFlashArgs): Promise<number> {
  const { target } = args;
  if (await sameFile(args.image, target)) {
    return reportOne(args.json, {
      status: 'failed',
      target,
      bytes: 0,
      code: 'target-is-source',
      message: `${target} is the image itself; choose another file to write to.`,
    });
  }
  // Before anything starts: a name that cannot be a file (a drive that is gone) is refused now.
  try {
    await checkFileTargetPath(target);
  } catch (error) {
    if (!(error instanceof JobError)) throw error;
    return reportOne(args.json, { status: 'failed', target, bytes: 0, ...error.failure });
  }
  const refused = await confirmReplace(target, args.yes);
  if (refused !== null) return refused;
  // A file is a copy of the image: its free space is written too (a block map still applies).
  const feed = await openSourceFeed(prepared, { output: 'descriptor', leaveOut: 'unmapped' });
  if (typeof feed.source !== 'number') {
    await feed.close();
    process.stderr.write(
      `sluice: writing a ${prepared.info.format} image to a file is not supported on this system.\n`,
    );
    return EXIT.unsupportedFormat;
  }
  const reporter = createReporter(args.json, 'flash-to-file');
  void feed.decoder.then((decoder) => {
    reporter.source(prepared.info, decoder);
    if (prepared.customisation !== null) reporter.customisation(prepared.customisation);
  });
  const controller = new AbortController();
  const sourceEnd = sourceEndSignal();
  const location = prepared.plan.location;
  const card = prepared.customisation?.overlays[0];
  const stopListening = cancelOnSigint(
    () => controller.abort(),
    `The unfinished ${FileTarget.partialPath(args.target)} is left behind; delete it.`,
  );
  const result = flashToFile({
    source: feed.source,
    imageSize: prepared.imageSize,
    sourceSeekable: feed.start.sourceSeekable,
    target,
    verify: args.verify,
    extents: feed.start.extents,
    // The kernel copies the file only where the feed reads it directly (not under sudo: see openSourceFeed),
    // and nothing is written after the image (a customisation goes through the writing loop).
    sourcePath:
      feed.start.sourceSeekable && location.kind === 'file' && feed.start.extents === undefined && card === undefined
        ? location.path
        : null,
    overlays: card === undefined ? undefined : Promise.resolve(new Map([[target, overlayPieces(card)]])),
    sourceEnd: feed.start.awaitSourceEnd === true ? sourceEnd.signal : undefined,
    signal: controller.signal,
    onProgress: (p) => reporter.progress(staged(p, feed.stage())),
  }).then((r) => [r]);
  const results = await feed.finish(
    result,
    wholeImageListener((end) => sourceEnd.settle(end)),
  );
  stopListening();
  reporter.end();
  for (const r of results) reporter.result(r);
  return exitCodeFor(results);
}
