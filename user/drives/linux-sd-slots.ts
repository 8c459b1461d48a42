import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Drive } from '../../common/domain/drive.js';

/**
 * drivelist counts every non-removable Linux disk as a system disk, and a board's or laptop's own
 * SD slot (mmcblkN) reports itself non-removable. The MMC core knows better: its device `type` is
 * "SD" for a card and "MMC" for soldered eMMC, which stays an internal disk. A card that holds the
 * running system stays `running` either way.
 */
export async function recogniseSdCards(drives: readonly Drive[], sysBlock = '/sys/block'): Promise<Drive[]> {
  return Promise.all(
    drives.map(async (d) => {
      if (d.system !== 'internal' || !d.device.startsWith('/dev/mmcblk')) return d;
      const type = await readFile(`${sysBlock}/${basename(d.device)}/device/type`, 'utf8').catch(() => '');
      return type.trim() === 'SD' ? { ...d, system: null, removable: true } : d;
    }),
  );
}
