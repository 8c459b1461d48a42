/**
 * What a customised card says about its first boot, read back from its boot partition: the
 * report firstrun.sh leaves there (FIRSTRUN_REPORT: one line per step, no values), and whether
 * firstrun.sh itself is still there (the card has not finished a first boot). Parsed as the user,
 * from bytes the helper sent; bounded by the file, which FatEditor.readFile caps.
 */
import type { ReadAt } from '../../node/read-at.js';
import type { PartitionTable } from '../../common/domain/image.js';
import { findBoot } from './detect.js';
import { FIRSTRUN_REPORT } from './firstrun.js';

/** Bytes of the drive's start read for its partition table: a GPT's 128 entries on 4Kn drives too. */
export const TABLE_HEAD_BYTES = 34 * 4096;
/** Lines of a report looked at: a script has six steps, a report has one line each and a heading. */
const MAX_REPORT_LINES = 64;
const HEADING = /^Sluice first boot: (\S{1,64})$/;
const STEP = /^(applied|FAILED) ([a-z][a-z0-9-]{0,31})(?: \((.{1,200})\))?$/;

export interface FirstBootStep {
  /** The step's name in the script: hostname, user, ssh, wifi, timezone, keymap. */
  step: string;
  applied: boolean;
  /** Why it failed, as the script put it ("exit status 1; ..."); null when it applied. */
  detail: string | null;
}

/** What the card says, by how far its first boot got. */
export type FirstBoot =
  /** The report, with every step the script ran; `finished` false while firstrun.sh is still on the card (the boot was cut short). */
  | { state: 'reported'; partition: number; ranAt: string; steps: FirstBootStep[]; finished: boolean }
  /** firstrun.sh is on the card, with no report: the card has not booted since it was written. */
  | { state: 'not-booted'; partition: number }
  /** Nothing of firstrun's: `why` says what was found instead. */
  | { state: 'none'; why: string };

/** The steps of a report's text, or null when it is not a report Sluice's firstrun.sh wrote. */
export function parseFirstBootReport(text: string): { ranAt: string; steps: FirstBootStep[] } | null {
  const [heading = '', ...lines] = text.split('\n', MAX_REPORT_LINES + 2);
  // More lines than a script writes is not its report: a step past the cut could have failed.
  if (lines.length > MAX_REPORT_LINES && lines.slice(MAX_REPORT_LINES).some((line) => line !== '')) return null;
  const ranAt = HEADING.exec(heading)?.[1];
  if (ranAt === undefined) return null;
  const steps: FirstBootStep[] = [];
  for (const line of lines) {
    if (line === '') continue;
    const match = STEP.exec(line);
    if (match === null) return null;
    steps.push({ step: match[2] ?? '', applied: match[1] === 'applied', detail: match[3] ?? null });
  }
  return { ranAt, steps };
}

/** What the drive `readAt` reads (its partition table `table`) says of its first boot: its first FAT partition's files. */
export async function readFirstBoot(readAt: ReadAt, table: PartitionTable): Promise<FirstBoot> {
  const found = await findBoot(readAt, table);
  if (found === null) return { state: 'none', why: 'The drive has no FAT boot partition that Sluice could read.' };
  const partition = found.partition.number;
  const script = found.fat.entries().some((e) => e.name.toLowerCase() === 'firstrun.sh');
  const bytes = await found.fat.readFile(FIRSTRUN_REPORT);
  if (bytes === null)
    return script
      ? { state: 'not-booted', partition }
      : {
          state: 'none',
          why: `Its boot partition (partition ${partition}) holds neither ${FIRSTRUN_REPORT} nor firstrun.sh: it was not customised with Sluice's firstrun.sh (cloud-init and rpi-preseed leave no report).`,
        };
  const report = parseFirstBootReport(bytes.toString('utf8'));
  if (report === null)
    return {
      state: 'none',
      why: `${FIRSTRUN_REPORT} on partition ${partition} is not a report Sluice's firstrun.sh wrote.`,
    };
  return { state: 'reported', partition, ...report, finished: !script };
}
