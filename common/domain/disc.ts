/**
 * Sentences about an optical-disc image's kind (common/domain/image.ts DiscImage), one wording for
 * `sluice info`, the CLI's warning before a flash and the app's image step.
 */
import type { DiscImage, ImageInfo } from './image.js';

/** What `sluice info` and the app say an ISO is. */
export function discSummary(disc: DiscImage): string {
  const how = [disc.elTorito ? 'El Torito (DVD boot)' : null, ...disc.efiLoaders]
    .filter((part) => part !== null)
    .join(', ');
  switch (disc.kind) {
    case 'hybrid':
      return 'a stick or a DVD: a hybrid ISO, with a partition table';
    case 'non-hybrid':
      return `a DVD only: an ISO without a partition table (${how}); written as it is, a stick boots nothing`;
    case 'windows':
      return `a DVD only: a Windows installer ISO (${disc.filesystem.toUpperCase()}); written as it is, a stick boots nothing`;
    case 'not-bootable':
      return 'nothing: an ISO with no boot record, no EFI loader and no partition table';
  }
}

/** What to do about an ISO that will not boot from a stick, said with unbootableAsWritten's sentence by the CLI. */
export function unbootableAdvice(disc: DiscImage): string {
  const anyway =
    'write it as it is anyway (for a virtual machine, or a tool that reads the ISO from the stick), pass --yes.';
  return disc.kind === 'not-bootable'
    ? `To ${anyway}`
    : `To make a stick that boots under UEFI from its files, pass --iso-mode files; to ${anyway}`;
}

/**
 * Why writing an image as it is gives a stick that will not boot, or null when it boots (or is no
 * ISO): a non-hybrid or Windows ISO, whose boot code a stick's firmware does not look for, or an
 * ISO with none.
 */
export function unbootableAsWritten(info: Pick<ImageInfo, 'name' | 'disc'>): string | null {
  const disc = info.disc;
  if (disc === null || disc.kind === 'hybrid') return null;
  if (disc.kind === 'not-bootable')
    return `${info.name} is an ISO with no partition table and no boot code: a stick written from it boots nothing.`;
  const what =
    disc.kind === 'windows' ? 'a Windows installer ISO' : 'an ISO that boots from a DVD but has no partition table';
  return `${info.name} is ${what}: written byte for byte, the stick boots nothing.`;
}
