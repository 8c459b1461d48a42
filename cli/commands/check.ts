import { fakeKindWords, type FakeKind } from '../../common/domain/fake-capacity.js';
import type { TargetResult } from '../../common/domain/result.js';
import { formatBytes, formatDuration } from '../../common/domain/units.js';
import { startHelper } from '../../user/launcher/launch.js';
import { cliHelperOptions } from '../helper-options.js';
import { cancelOnSigint } from '../cancel.js';
import { checkedDrive } from '../checked-drive.js';
import { namedDrives } from '../drive-names.js';
import { exitCodeFor } from '../exit-codes.js';
import { resultLine } from '../render.js';

export interface CheckArgs {
  device: string;
  yes: boolean;
  json: boolean;
  elevate?: 'sudo' | 'pkexec' | undefined;
}

/** What `sluice check` prints, beside the result: the drive's real and claimed capacity, the kind of fake, the time. */
interface CheckReport {
  type: 'check';
  target: string;
  claimedBytes: number;
  realBytes: number;
  /** null: it holds what it claims. */
  kind: FakeKind | null;
  seconds: number;
}

function reportOf(result: TargetResult, seconds: number): CheckReport | null {
  if (result.status === 'ok')
    return {
      type: 'check',
      target: result.target,
      claimedBytes: result.bytes,
      realBytes: result.bytes,
      kind: null,
      seconds,
    };
  if (result.status === 'failed' && result.fakeCapacity !== undefined) {
    const { claimedBytes, realBytes, kind } = result.fakeCapacity;
    return { type: 'check', target: result.target, claimedBytes, realBytes, kind, seconds };
  }
  return null;
}

function reportLine(report: CheckReport, result: TargetResult): string {
  const time = formatDuration(report.seconds);
  if (report.kind === null) {
    const markers =
      result.status === 'ok' && result.capacityCheck !== undefined
        ? `${result.capacityCheck.markers} test blocks`
        : 'test blocks';
    return `${report.target}: holds what it claims, ${formatBytes(report.claimedBytes)} (${markers} written and read back, then restored; ${time}).`;
  }
  const fake = { kind: report.kind, realBytes: report.realBytes, claimedBytes: report.claimedBytes };
  return `${report.target}: FAKE CAPACITY. Real capacity about ${formatBytes(report.realBytes)} (${report.realBytes} bytes) of the ${formatBytes(report.claimedBytes)} claimed: ${fakeKindWords(fake)}. Its data was restored (${time}). Do not trust this drive with data.`;
}

/**
 * `sluice check DEVICE [--yes] [--json] [--elevate sudo|pkexec]`: checks a drive for fake capacity
 * without losing its data (writer/fake-capacity-check.ts runs in the helper, as root). Exit 0: it holds
 * what it claims; 1: it does not, or the check failed; 130: cancelled, with everything restored.
 * The drive is judged and confirmed as a flash's target is (cli/checked-drive.ts): the check
 * unmounts it and overwrites some of its blocks for a moment, and a crash in that moment would
 * leave test markers where its data was.
 */
export async function checkCommand(args: CheckArgs): Promise<number> {
  const [target = args.device] = await namedDrives([args.device]);
  const drive = await checkedDrive(target, args, () => ({
    warning:
      'This will unmount this drive and write test blocks over some of its blocks, putting each back afterwards:\n  DRIVE',
  }));
  if (typeof drive === 'number') return drive;
  const started = performance.now();
  const job = startHelper({
    job: { kind: 'check', target, medium: drive.medium },
    ...cliHelperOptions(args.elevate),
  });
  if (!args.json) process.stderr.write(`Checking ${target}: writing test blocks and putting its data back…\n`);
  const stopListening = cancelOnSigint(
    () => job.cancel(),
    'Blocks being tested may now hold test markers instead of their data.',
  );
  const results = await job.result;
  stopListening();
  const seconds = (performance.now() - started) / 1000;
  for (const result of results) {
    const report = reportOf(result, seconds);
    if (args.json) {
      if (report !== null) process.stdout.write(`${JSON.stringify(report)}\n`);
      process.stdout.write(`${JSON.stringify({ type: 'result', ...result })}\n`);
    } else {
      process.stdout.write(`${report !== null ? reportLine(report, result) : resultLine(result, 'check')}\n`);
    }
  }
  return exitCodeFor(results);
}
