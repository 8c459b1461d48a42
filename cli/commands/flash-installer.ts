import { DRIVE_INCOMPLETE } from '../../common/domain/result.js';
import { JobError } from '../../common/domain/failure.js';
import { formatBytes, formatDuration } from '../../common/domain/units.js';
import { closeFd } from '../../node/io.js';
import { createOsPipe } from '../../node/os-pipe.js';
import { feedStick, openInstallerSource, planStick, type InstallerSource } from '../../user/installer/installer-job.js';
import { stickJob } from '../../user/installer/stick-job.js';
import type { StickPlan } from '../../user/installer/layout.js';
import { invokingUser } from '../../user/images/processes/image-child.js';
import { startHelper } from '../../user/launcher/launch.js';
import { cancelOnSigint } from '../cancel.js';
import { checkedDrive } from '../checked-drive.js';
import { namedDrives } from '../drive-names.js';
import { EXIT, exitCodeFor } from '../exit-codes.js';
import { cliHelperOptions } from '../helper-options.js';
import { createReporter } from '../reporter.js';

export interface InstallerArgs {
  image: string;
  targets: string[];
  verify: boolean;
  eject: boolean;
  yes: boolean;
  json: boolean;
  elevate?: 'sudo' | 'pkexec' | undefined;
}

function stickLine(
  target: string,
  source: InstallerSource,
  plan: StickPlan,
  seconds: number,
  verified: boolean,
): string {
  // A stick written with --no-verify is never said to be read back.
  const how = verified ? 'written and read back' : 'written but NOT verified (--no-verify)';
  return `${target}: made an installer stick: one FAT32 partition of ${formatBytes(plan.partitionBytes)} holding the ISO's ${source.files} files (${formatBytes(source.fileBytes)}), ${how} in ${formatDuration(seconds)}; the rest of the drive left as it was.`;
}

async function openSource(image: string, json: boolean): Promise<InstallerSource | number> {
  try {
    return await openInstallerSource(image);
  } catch (error) {
    if (!(error instanceof JobError)) throw error;
    process.stderr.write(`sluice: ${error.failure.message} Nothing was written.\n`);
    if (json)
      process.stdout.write(`${JSON.stringify({ type: 'result', status: 'failed', bytes: 0, ...error.failure })}\n`);
    return EXIT.failed;
  }
}

/**
 * `sluice flash ISO DEVICE --iso-mode files`: builds an installer stick from the ISO's files
 * (user/installer/) instead of writing the ISO byte for byte. The ISO is read in this process:
 * under sudo that would parse an image with root's rights on another user's behalf, so it is refused.
 */
export async function flashInstallerCommand(args: InstallerArgs): Promise<number> {
  if (invokingUser() !== null) {
    process.stderr.write(
      'sluice: installer mode reads the ISO as the user who ran sudo, and this process is still root because that user could not be found; run sluice without sudo (it asks for administrator rights only to write the drive). Nothing was written.\n',
    );
    return EXIT.usage;
  }
  const [target, ...more] = await namedDrives(args.targets);
  if (target === undefined || more.length > 0) {
    process.stderr.write('sluice: installer mode makes one stick at a time: name one drive.\n');
    return EXIT.usage;
  }
  const source = await openSource(args.image, args.json);
  if (typeof source === 'number') return source;
  try {
    let plan: StickPlan | null = null;
    const drive = await checkedDrive(target, args, (listed) => {
      try {
        plan = planStick(source, listed);
      } catch (error) {
        if (error instanceof JobError) return { problem: error.failure.message };
        throw error;
      }
      return {
        warning: `This will ERASE everything on:\n  DRIVE\nand make it an installer stick holding the files of ${args.image}.`,
      };
    });
    if (typeof drive === 'number' || plan === null) return typeof drive === 'number' ? drive : EXIT.usage;
    const stick: StickPlan = plan;
    const reporter = createReporter(args.json);
    const pipe = await createOsPipe();
    const job = startHelper({
      source: pipe.readFd,
      job: stickJob(drive, stick, args),
      ...cliHelperOptions(args.elevate),
      onProgress: (p) => reporter.progress(p),
    });
    const fed = feedStick(source, stick, pipe.writeFd, (end) => job.endSource(end));
    const stopListening = cancelOnSigint(() => job.cancel(), DRIVE_INCOMPLETE);
    const results = await job.result;
    stopListening();
    // Open until the job ends: through the sudo broker this process relays the read end to the
    // helper's channel itself. Closed then, a stick whose helper stopped early ends its feed.
    await closeFd(pipe.readFd);
    await fed;
    reporter.end();
    for (const r of results) {
      if (r.status === 'ok' && !args.json)
        process.stdout.write(`${stickLine(target, source, stick, r.seconds, r.verified)}\n`);
      else reporter.result(r);
    }
    return exitCodeFor(results);
  } finally {
    await source.close();
  }
}
