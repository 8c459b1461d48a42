import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';

/**
 * Which medium is in `device` now (Drive.medium): Linux's disk sequence number, new for every
 * medium the kernel sees (a card inserted, a loop device attached), so a card swapped for another
 * between two listings, in the same slot under the same name, is still a new card. Null where
 * the OS has none: there a new card shows only as a new device, or as a medium in a reader that
 * had none.
 */
export async function mediumId(device: string): Promise<string | null> {
  if (process.platform !== 'linux') return null;
  const seq = await readFile(`/sys/block/${basename(device)}/diskseq`, 'utf8').catch(() => null);
  return seq === null ? null : seq.trim();
}
