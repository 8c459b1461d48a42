/**
 * What an erase leaves on a drive (`sluice erase`, "Erase…" in the app; user/erase builds it):
 * one partition, FAT32 up to 32 GiB and exFAT above, as the SD Association's formatter chooses.
 */
import { GiB } from './units.js';

export type EraseFilesystem = 'fat32' | 'exfat';

/** Up to this size a drive gets FAT32 (SDHC), above it exFAT (SDXC). */
export const FAT32_MAX_BYTES = 32 * GiB;

export const FILESYSTEM_NAMES: Readonly<Record<EraseFilesystem, string>> = { fat32: 'FAT32', exfat: 'exFAT' };

export function eraseFilesystem(driveBytes: number): EraseFilesystem {
  return driveBytes <= FAT32_MAX_BYTES ? 'fat32' : 'exfat';
}
