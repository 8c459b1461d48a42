import type { Drive } from '../common/domain/drive.js';
import type { TargetResult } from '../common/domain/result.js';

/**
 * Why `drive`, an internal disk of this computer as `listed` says, is not backed up: reading it
 * whole needs its name typed at the terminal, as erasing it does (`ask` is null with --yes or
 * without a terminal, where nobody can type it). Null when it may be read: typed, or not internal
 * (a disk that holds the running system is the helper's to judge).
 */
export async function unconfirmedInternalDisk(
  drive: string,
  listed: Drive | undefined,
  ask: ((question: string) => Promise<string>) | null,
): Promise<Extract<TargetResult, { status: 'failed' }> | null> {
  if (listed?.system !== 'internal') return null;
  const typed = ask === null ? '' : await ask(`Type ${drive} to back it up (it is only read): `);
  if (typed === drive) return null;
  const why = ask === null ? 'Run without --yes, at a terminal, to be asked for it.' : 'The name typed did not match.';
  return {
    status: 'failed',
    target: drive,
    bytes: 0,
    code: 'target-system',
    message: `${drive} is an internal disk of this computer: backing it up needs its name typed. ${why} Nothing was read.`,
  };
}
