import { jobError } from '../common/domain/failure.js';
import { closeFd } from '../node/io.js';
import type { DeviceFacts, DevicePlatform, VolumeHold } from './platform/types.js';

/** A drive's descriptor and what the OS holds for it while it is open (open-device.ts). */
export interface OpenDrive {
  fd: number;
  hold: VolumeHold;
}

/**
 * Refuses the drive `facts` describes when `medium` (the one the user chose, Drive.medium; null:
 * none to compare) is not the one in it now. `untouched` says what did not happen to it ("Nothing
 * was written to it"), since a job that reads is refused as firmly as one that writes: a backup or
 * a check of the wrong card would report on a card nobody chose.
 */
export async function refuseOtherMedium(facts: DeviceFacts, platform: DevicePlatform, medium: string | null, untouched: string): Promise<void> {
  if (medium === null || (await platform.medium(facts)) === medium) return;
  throw jobError('target-not-found', `${facts.path} holds another medium than the one chosen (a card swapped in the same reader?). ${untouched}; choose the drive again.`);
}

/**
 * Opens a drive only while it holds `medium`: compared before `open` (which may unmount: another
 * card's filesystems are left alone) and again on the open drive, so that a card swapped between
 * the look and the open fails here instead of being used; the drive is closed again then.
 */
export async function openSameMedium(facts: DeviceFacts, platform: DevicePlatform, medium: string | null, untouched: string, open: () => Promise<OpenDrive>): Promise<OpenDrive> {
  await refuseOtherMedium(facts, platform, medium, untouched);
  const opened = await open();
  try {
    await refuseOtherMedium(facts, platform, medium, untouched);
  } catch (error) {
    await closeFd(opened.fd).catch(() => undefined);
    await opened.hold.release().catch(() => undefined);
    throw error;
  }
  return opened;
}
