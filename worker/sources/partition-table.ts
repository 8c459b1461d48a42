/** Bytes of an image's start needed to find its partition table: a GPT header sits at LBA 1, which is byte 4096 on 4Kn disks. */
export const PARTITION_SNIFF_BYTES = 4096 + 512;

const GPT_SIGNATURE = [0x45, 0x46, 0x49, 0x20, 0x50, 0x41, 0x52, 0x54]; // "EFI PART"
const GPT_HEADER_OFFSETS = [512, 4096];
const MBR_ENTRIES_OFFSET = 446;
const MBR_ENTRY_BYTES = 16;

function hasAt(bytes: Uint8Array, offset: number, signature: readonly number[]): boolean {
  return bytes.length >= offset + signature.length && signature.every((b, i) => bytes[offset + i] === b);
}

/**
 * The partition table a raw disk image starts with. A 0x55AA boot signature alone is not enough:
 * a FAT volume's boot sector has one too, so the four MBR entries must also look like entries
 * (status 0x00 or 0x80, at least one with a type).
 */
export function detectPartitionTable(head: Uint8Array): 'gpt' | 'mbr' | 'none' {
  if (GPT_HEADER_OFFSETS.some((offset) => hasAt(head, offset, GPT_SIGNATURE))) return 'gpt';
  if (head[510] !== 0x55 || head[511] !== 0xaa) return 'none';
  let typed = 0;
  for (let entry = 0; entry < 4; entry++) {
    const at = MBR_ENTRIES_OFFSET + entry * MBR_ENTRY_BYTES;
    const status = head[at];
    if (status !== 0x00 && status !== 0x80) return 'none';
    if (head[at + 4] !== 0) typed += 1;
  }
  return typed > 0 ? 'mbr' : 'none';
}
