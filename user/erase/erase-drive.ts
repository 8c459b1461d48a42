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
 * The helper job that writes `plan` to `drive`, and its fd 0 (the caller disposes of it after the job):
 * a block-mapped flash of the whole drive's size whose stream is only the ranges the tables take,
 * so the writer blanks the head first, writes it last and reads everything back. No capacity
 * markers: nothing lies past an image the drive's size (`sluice probe` checks the capacity).
 */
export async function eraseJob(
  drive: Pick<Drive, 'device' | 'medium'>,
  plan: ErasePlan,
): Promise<{ source: PlanFile; job: HelperJobOf<'flash'> }> {
  const source = await planFile(plan);
  // The plan fits the medium that was measured; the helper refuses the drive if it holds another.
  return {
    source,
    job: {
      kind: 'flash',
      targets: [drive.device],
      media: [drive.medium],
      imageSize: plan.driveBytes,
      sourceSeekable: false,
      extents: plan.extents,
      verify: true,
      eject: false,
      capacityCheck: false,
    },
  };
}
