/**
 * Image container formats Sluice recognises. The list is the single source for the type and for
 * the app's IPC schemas; detection lives in user/images/formats/detect-format.ts.
 */
export const IMAGE_FORMATS = ['raw', 'gzip', 'xz', 'bzip2', 'zstd', 'zip', 'qcow2', 'dmg'] as const;

export type ImageFormat = (typeof IMAGE_FORMATS)[number];
