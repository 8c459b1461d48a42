import { formatBytes } from '../../common/units.js';
import { currentPlatform } from '../../engine/platform/index.js';
import { chooseElevation, onPath } from '../../helper/elevation/choose.js';
import { startHelper } from '../../helper/launch.js';
import { cancelOnSigint } from '../cancel.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { confirm } from '../prompt.js';
import { createReporter } from '../reporter.js';
import { openRawImage } from './open-raw-image.js';

export interface FlashArgs {
  image: string;
  targets: string[];
  verify: boolean;
  yes: boolean;
  json: boolean;
  /** How to get root when not root already; default: sudo in a terminal, pkexec otherwise. */
  elevate?: 'sudo' | 'pkexec' | undefined;
}

/** Asks before erasing, naming each drive the way its owner knows it. */
async function confirmErase(image: string, imageSize: number, targets: readonly string[]): Promise<boolean> {
  // Loaded only here: the native drive lister costs 2 MB of RSS that a --yes run never needs.
  const { driveLabel, listSystemDrives } = await import('../../drives/list-drives.js');
  const drives = await listSystemDrives().catch(() => []);
  const platform = currentPlatform();
  const names = await Promise.all(
    targets.map(async (t) => {
      const facts = await platform.inspect(t);
      return `  ${t}  ${driveLabel(drives.find((d) => d.device === t))}, ${formatBytes(facts.size)}`;
    }),
  );
  process.stderr.write(`This will ERASE everything on:\n${names.join('\n')}\nand write ${image} (${formatBytes(imageSize)}).\n`);
  return confirm('Continue?');
}

/** `sluice flash IMAGE DEVICE... [--no-verify] [--yes] [--json]` */
export async function flashCommand(args: FlashArgs): Promise<number> {
  const image = await openRawImage(args.image);
  if (typeof image === 'number') return image;
  try {
    if (!args.yes) {
      if (!process.stdin.isTTY) {
        process.stderr.write('sluice: refusing to erase a drive without confirmation; pass --yes when running without a terminal.\n');
        return EXIT.usage;
      }
      if (!(await confirmErase(args.image, image.fileSize, args.targets))) {
        process.stderr.write('Nothing was written.\n');
        return EXIT.cancelled;
      }
    }
    const reporter = createReporter(args.json);
    const interactive = process.stdin.isTTY === true;
    // The helper is its own process even when we are root: it runs with the V8 flags that keep its
    // memory flat, and the CLI stays responsive to Ctrl-C while the helper does the I/O. When we
    // are not root it is the only part that gets root; the image is still opened and read as us.
    const job = startHelper({
      source: image.fd,
      start: { targets: args.targets, imageSize: image.fileSize, sourceSeekable: true, verify: args.verify },
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
