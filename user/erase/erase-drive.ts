import { randomBytes } from 'node:crypto';
import type { HelperJobOf } from '../../common/contracts/helper-protocol.js';
import type { Drive } from '../../common/domain/drive.js';
import { planFile, type PlanFile } from './stream.js';
import { erasePlan, type ErasePlan } from './volume.js';

/** The layout an erase gives `drive`; throws an Error saying why the drive cannot be given one (its size, the label). */
export function planErase(drive: Pick<Drive, 'size' | 'logicalBlockSize'>, label: string | null): ErasePlan {
  if (drive.size === null) throw new Error('there is no medium in it');
  return erasePlan({
    driveBytes: drive.size,
    sectorBytes: drive.logicalBlockSize,
    label,
    serial: randomBytes(4).readUInt32LE(),
    diskSignature: randomBytes(4).readUInt32LE(),
  });
}

/**
 * A block-mapped flash of the whole drive's size whose stream is only `plan`'s written ranges (an
 * erase's tables, an installer stick's volume), so the writer blanks the head first, writes it
 * last and reads everything back. No capacity markers: nothing lies past an image the drive's size
 * (`sluice check` checks the capacity). The plan fits the medium that was measured; the helper
 * refuses the drive if it holds another.
 */
export function wholeDriveJob(
  drive: Pick<Drive, 'device' | 'medium'>,
  plan: { driveBytes: number; extents: [number, number][] },
  options: { verify: boolean; eject: boolean },
): HelperJobOf<'flash'> {
  return {
    kind: 'flash',
    targets: [drive.device],
    media: [drive.medium],
    imageSize: plan.driveBytes,
    sourceSeekable: false,
    extents: plan.extents,
    verify: options.verify,
    eject: options.eject,
    capacityCheck: false,
  };
}

/** The helper job that writes `plan` to `drive`, and its fd 0 (the caller disposes of it after the job). */
export async function eraseJob(
  drive: Pick<Drive, 'device' | 'medium'>,
  plan: ErasePlan,
): Promise<{ source: PlanFile; job: HelperJobOf<'flash'> }> {
  return { source: await planFile(plan), job: wholeDriveJob(drive, plan, { verify: true, eject: false }) };
}
