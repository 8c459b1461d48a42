import { formatBytes } from '../../common/units.js';
import { chooseElevation, onPath } from '../../helper/elevation/choose.js';
import { startHelper } from '../../helper/launch.js';
import { cancelOnSigint } from '../cancel.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { confirm } from '../prompt.js';
import { createReporter } from '../reporter.js';
import { openRawImage } from './open-raw-image.js';
import { judgeTargets, refuseTargets, type JudgedTarget } from './target-verdicts.js';

export interface FlashArgs {
  image: string;
  targets: string[];
  verify: boolean;
  /** Eject each drive after a good write (on unless --no-eject). */
  eject: boolean;
  yes: boolean;
  json: boolean;
  /** How to get root when not root already; default: sudo in a terminal, pkexec otherwise. */
  elevate?: 'sudo' | 'pkexec' | undefined;
}

/** Asks before erasing, naming each drive the way its owner knows it. */
async function confirmErase(image: string, imageSize: number, judged: readonly JudgedTarget[]): Promise<boolean> {
  const names = judged.map(({ target, drive }) => {
    const description = drive?.description || 'unnamed drive';
    return `  ${target}  ${description}${drive?.size ? `, ${formatBytes(drive.size)}` : ''}`;
  });
  process.stderr.write(`This will ERASE everything on:\n${names.join('\n')}\nand write ${image} (${formatBytes(imageSize)}).\n`);
  return confirm('Continue?');
}

/** `sluice flash IMAGE DEVICE... [--no-verify] [--no-eject] [--yes] [--json] [--elevate sudo|pkexec]` */
export async function flashCommand(args: FlashArgs): Promise<number> {
  const image = await openRawImage(args.image);
  if (typeof image === 'number') return image;
  try {
    const interactive = process.stdin.isTTY === true;
    if (!args.yes && !interactive) {
      process.stderr.write('sluice: refusing to erase a drive without confirmation; pass --yes when running without a terminal.\n');
      return EXIT.usage;
    }
    const reporter = createReporter(args.json);
    const judged = await judgeTargets(args.image, image.fileSize, args.targets);
    const refused = await refuseTargets(judged, interactive && !args.yes);
    if (refused.length > 0) {
      // One refused drive stops the whole job: the user asked for all of them, and gets none half-done.
      for (const r of refused) reporter.result(r);
      if (refused.length < args.targets.length) process.stderr.write('sluice: nothing was written to any drive.\n');
      return exitCodeFor(refused);
    }
    if (!args.yes && !(await confirmErase(args.image, image.fileSize, judged))) {
      process.stderr.write('Nothing was written.\n');
      return EXIT.cancelled;
    }
    // The helper is its own process even when we are root: it runs with the V8 flags that keep its
    // memory flat, and the CLI stays responsive to Ctrl-C while the helper does the I/O. When we
    // are not root it is the only part that gets root; the image is still opened and read as us.
    const job = startHelper({
      source: image.fd,
      start: { targets: args.targets, imageSize: image.fileSize, sourceSeekable: true, verify: args.verify, eject: args.eject },
      elevation: chooseElevation({
        platform: process.platform,
        isRoot: process.getuid?.() === 0,
        frontEnd: 'cli',
        interactive,
        prefer: args.elevate,
        installed: onPath,
      }),
      interactive,
      onProgress: (p) => reporter.progress(p),
      onLog: (_level, message) => process.stderr.write(`sluice: ${message}\n`),
    });
    const stopListening = cancelOnSigint(() => job.cancel());
    const results = await job.result;
    stopListening();
    reporter.end();
    for (const r of results) reporter.result(r);
    return exitCodeFor(results);
  } finally {
    await image.close();
  }
}
