/** The formats a backup can be compressed into (each by its system tool, user/backup/compressor.ts). */
export const BACKUP_COMPRESSIONS = ['zstd', 'xz', 'gz'] as const;
export type BackupCompression = (typeof BACKUP_COMPRESSIONS)[number];
