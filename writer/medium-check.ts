import { jobError, type FailureCode } from '../common/domain/failure.js';
import { closeFd } from '../node/io.js';
import type { OpenDrive } from './open-device.js';
import type { DeviceFacts, DevicePlatform } from './platform/types.js';

/**
 * What a job does with a drive, for its refusal: what did not happen to the drive, and the code
 * the refusal carries (a source's is a read error, which the app words as the drive it read).
 */
export interface DriveUse {
  untouched: string;
  code: Extract<FailureCode, 'target-not-found' | 'source-read-error'>;
}
export const WRITES: DriveUse = { untouched: 'Nothing was written to it', code: 'target-not-found' };
export const READS: DriveUse = { untouched: 'Nothing was read from it', code: 'source-read-error' };
export const COMPARES: DriveUse = { untouched: 'Nothing was compared', code: 'target-not-found' };

/**
 * Refuses the drive `facts` describes when `medium` (the one the user chose, Drive.medium; null:
 * none to compare) is not the one in it now; a job that reads is refused as firmly as one that
 * writes, since a backup or a check of the wrong card would report on a card nobody chose.
 */
export async function refuseOtherMedium(
  facts: DeviceFacts,
  platform: DevicePlatform,
  medium: string | null,
  use: DriveUse,
): Promise<void> {
  if (medium === null) return;
  const now = await platform.medium(facts);
  if (now === medium) return;
  const what =
    now === null
      ? 'holds no medium now (was the card taken out?)'
      : 'holds another medium than the one chosen (a card swapped in the same reader?)';
  throw jobError(use.code, `${facts.path} ${what}. ${use.untouched}; choose the drive again.`);
}

/**
 * Opens a drive only while it holds `medium`: compared before `open` (which may unmount: another
 * card's filesystems are left alone) and again on the open drive, so that a card swapped between
 * the look and the open fails here instead of being used; the drive is closed again then.
 */
export async function openSameMedium(
  facts: DeviceFacts,
  platform: DevicePlatform,
  medium: string | null,
  use: DriveUse,
  open: () => Promise<OpenDrive>,
): Promise<OpenDrive> {
  await refuseOtherMedium(facts, platform, medium, use);
  const opened = await open();
  try {
    await refuseOtherMedium(facts, platform, medium, use);
  } catch (error) {
    await closeFd(opened.fd).catch(() => undefined);
    await opened.hold.release().catch(() => undefined);
    throw error;
  }
  return opened;
}
