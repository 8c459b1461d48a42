/**
 * The helper job that writes an installer stick: the erase's whole-drive job (head blanked first
 * and written last, every written byte read back) with the stick's written ranges, and the helper
 * waits for the feed's word before it writes the head. Apart from the builder, which reads the ISO:
 * the app's main process starts the job from the ranges the builder process sent.
 */
import type { HelperJobOf } from '../../common/contracts/helper-protocol.js';
import type { Drive } from '../../common/domain/drive.js';
import { wholeDriveJob } from '../erase/erase-drive.js';
import type { StickPlan } from './layout.js';

export function stickJob(
  drive: Pick<Drive, 'device' | 'medium'>,
  plan: Pick<StickPlan, 'driveBytes' | 'extents'>,
  options: { verify: boolean; eject: boolean },
): HelperJobOf<'flash'> {
  return { ...wholeDriveJob(drive, plan, options), awaitSourceEnd: true };
}
