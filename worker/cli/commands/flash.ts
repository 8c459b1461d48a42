import { formatBytes } from '../../common/units.js';
import { driveLabel, listSystemDrives } from '../../drives/list-drives.js';
import { flash } from '../../engine/flash.js';
import { currentPlatform } from '../../engine/platform/index.js';
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
}

/** Asks before erasing, naming each drive the way its owner knows it. */
async function confirmErase(image: string, imageSize: number, targets: readonly string[]): Promise<boolean> {
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
    if (process.getuid?.() !== 0 && process.platform !== 'win32') {
      process.stderr.write('sluice: writing a disk needs root. Run: sudo sluice flash …\n');
      return EXIT.refused;
    }
    const controller = new AbortController();
    const reporter = createReporter(args.json);
    const stopListening = cancelOnSigint(() => controller.abort());
    const results = await flash({
      source: image.fd,
      imageSize: image.fileSize,
      sourceSeekable: true,
      targets: args.targets,
      verify: args.verify,
      signal: controller.signal,
      onProgress: (p) => reporter.progress(p),
    });
    stopListening();
    reporter.end();
    for (const r of results) reporter.result(r);
    return exitCodeFor(results);
  } finally {
    await image.close();
  }
}
