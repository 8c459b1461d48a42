import { formatBytes } from '../../common/domain/units.js';
import { DRIVE_INCOMPLETE } from '../../common/domain/result.js';
import { currentPlatform } from '../../writer/platform/index.js';
import { refuseSource } from '../../writer/source-device.js';
import { startHelper } from '../../user/launcher/launch.js';
import { cliHelperOptions } from '../helper-options.js';
import { cancelOnSigint } from '../cancel.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { namedDrives } from '../drive-names.js';
import { confirm } from '../prompt.js';
import { createReporter } from '../reporter.js';
import { reportOne } from '../reporter.js';
import { judgeTargets, mediaOf, refuseTargets } from './target-verdicts.js';

export interface CloneArgs {
  source: string;
  target: string;
  verify: boolean;
  eject: boolean;
  yes: boolean;
  json: boolean;
  elevate?: 'sudo' | 'pkexec' | undefined;
}

/**
 * `sluice clone SOURCE_DRIVE TARGET_DRIVE`: the helper reads the source (read-only, after its
 * checks) and writes it to the target with the flash path's checks, head last, then reads the
 * target back against the hashes of what it read. The bytes never leave the helper.
 */
export async function cloneCommand(args: CloneArgs): Promise<number> {
  const [source = args.source, target = args.target] = await namedDrives([args.source, args.target]);
  const platform = await currentPlatform();
  const facts = await platform.inspect(source);
  // The card the user is about to confirm: read before the prompt, so that one swapped at it is refused.
  const sourceMedium = await platform.medium(facts);
  const refusal = refuseSource(facts);
  if (refusal !== null) return reportOne(args.json, { status: 'failed', target: source, bytes: 0, ...refusal });
  if (source === target) {
    return reportOne(args.json, {
      status: 'failed',
      target,
      bytes: 0,
      code: 'target-is-source',
      message: `${target} is the drive being copied; choose another drive to write to.`,
    });
  }
  const interactive = process.stdin.isTTY === true;
  if (!args.yes && !interactive) {
    process.stderr.write(
      'sluice: refusing to erase a drive without confirmation; pass --yes when running without a terminal.\n',
    );
    return EXIT.usage;
  }
  const judged = await judgeTargets(source, { size: facts.size }, [target]);
  const refused = await refuseTargets(judged, interactive && !args.yes);
  if (refused.length > 0) {
    for (const r of refused) reportOne(args.json, r);
    return exitCodeFor(refused);
  }
  if (!args.yes) {
    const drive = judged[0]?.drive;
    process.stderr.write(
      `This will ERASE everything on:\n  ${target}  ${drive?.description || 'unnamed drive'}\nand copy all of ${source} (${formatBytes(facts.size)}) onto it.\n`,
    );
    if (!(await confirm('Continue?'))) {
      process.stderr.write('Nothing was written.\n');
      return EXIT.cancelled;
    }
  }
  const reporter = createReporter(args.json, 'clone');
  const job = startHelper({
    job: {
      kind: 'clone',
      source,
      sourceMedium,
      targets: [target],
      media: mediaOf(judged),
      verify: args.verify,
      eject: args.eject,
    },
    ...cliHelperOptions(args.elevate),
    onProgress: (p) => reporter.progress(p),
  });
  const stopListening = cancelOnSigint(() => job.cancel(), DRIVE_INCOMPLETE);
  const results = await job.result;
  stopListening();
  reporter.end();
  for (const r of results) reporter.result(r);
  return exitCodeFor(results);
}
