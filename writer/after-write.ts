import type { TargetResult } from '../common/domain/result.js';
import type { DeviceFacts, DevicePlatform } from './platform/types.js';
import { errorText } from '../common/domain/error-details.js';

/**
 * What happens to a disk once the job has closed it. After a good write with `eject` on, the drive
 * is ejected; otherwise (nothing to eject, ejecting failed, eject off, or the job failed) the OS is
 * made to read the partition table now on it, so the new partitions appear, or, after a failure,
 * the old ones vanish instead of pointing into half-written data. Neither step can turn a good
 * write into a failure: their problems become warnings on the ok result.
 */
export async function settleTarget(
  facts: DeviceFacts,
  result: TargetResult,
  eject: boolean,
  platform: DevicePlatform,
): Promise<TargetResult> {
  const warnings: string[] = [];
  const done = result.status === 'ok' ? `${facts.path} is ${result.verified ? 'written and verified' : 'written'}` : '';
  if (result.status === 'ok' && eject) {
    try {
      if (await platform.eject(facts)) return { ...result, ejected: true };
    } catch (error) {
      warnings.push(`${done}, but could not be ejected (${errorText(error)}). Eject it yourself before unplugging it.`);
    }
  }
  try {
    await platform.rereadPartitions(facts);
  } catch (error) {
    warnings.push(
      `${done}, but the system did not pick up its new partitions (${errorText(error)}). Unplug it and plug it back in to see them.`,
    );
  }
  if (result.status !== 'ok') return result;
  return { ...result, ...(eject ? { ejected: false } : {}), ...(warnings.length > 0 ? { warnings } : {}) };
}
