import { readDrive } from '../../user/backup/read-drive.js';
import { readFirstBoot, TABLE_HEAD_BYTES, type FirstBoot } from '../../user/customise/first-boot-report.js';
import { readPartitionTable } from '../../user/images/formats/partition-table.js';
import { FIRSTRUN_REPORT } from '../../user/customise/firstrun.js';
import { startHelper } from '../../user/launcher/launch.js';
import { cliHelperOptions } from '../helper-options.js';
import { namedDrives } from '../drive-names.js';
import { EXIT } from '../exit-codes.js';
import { reportOne } from '../reporter.js';

export interface FirstBootArgs {
  target: string;
  json: boolean;
  elevate?: 'sudo' | 'pkexec' | undefined;
}

/** What the card says, in words: one line per step, then the verdict. */
export function firstBootLines(target: string, found: FirstBoot): string[] {
  switch (found.state) {
    case 'none':
      return [`${target}: no first-boot report. ${found.why}`];
    case 'not-booted':
      return [
        `${target}: not booted yet: firstrun.sh is still on its boot partition (partition ${found.partition}), and there is no ${FIRSTRUN_REPORT}. Nothing has been applied.`,
      ];
    case 'reported': {
      const failed = found.steps.filter((s) => !s.applied).map((s) => s.step);
      const lines = [
        `${target}: first boot ${found.ranAt} (${FIRSTRUN_REPORT} on partition ${found.partition}):`,
        ...found.steps.map((s) =>
          s.applied ? `  applied  ${s.step}` : `  FAILED   ${s.step} (${s.detail ?? 'no reason given'})`,
        ),
      ];
      if (!found.finished)
        lines.push(
          '  firstrun.sh is still on the card: that boot ended before the script did (power cut?); it runs again on the next boot.',
        );
      if (failed.length > 0)
        lines.push(
          `${failed.length} of ${found.steps.length} settings did not apply: ${failed.join(', ')}. The others did.`,
        );
      else if (found.finished) lines.push(`Every setting applied (${found.steps.length}).`);
      return lines;
    }
  }
}

/**
 * `sluice verify --customisation DEVICE [--json] [--elevate sudo|pkexec]`: what a card customised
 * with firstrun.sh says of its first boot, read back from its boot partition: which settings
 * applied and which failed. The helper sends the ranges this process asks for; nothing is written.
 * Exit 0 only when every step applied and the script finished.
 */
export async function firstBootCommand(args: FirstBootArgs): Promise<number> {
  const [target = args.target] = await namedDrives([args.target]);
  const { result, value } = await readDrive(
    { drive: target, launch: (options) => startHelper({ ...options, ...cliHelperOptions(args.elevate) }) },
    async (readAt) => readFirstBoot(readAt, readPartitionTable(await readAt(0, TABLE_HEAD_BYTES))),
  );
  if (value === null) return reportOne(args.json, result);
  const applied = value.state === 'reported' && value.finished && value.steps.every((s) => s.applied);
  if (args.json) process.stdout.write(`${JSON.stringify({ type: 'first-boot', target, ...value })}\n`);
  else process.stdout.write(`${firstBootLines(target, value).join('\n')}\n`);
  return applied ? EXIT.ok : EXIT.failed;
}
