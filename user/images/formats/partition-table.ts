import type { PartitionEntry, PartitionTable, PartitionTableType } from '../../../common/domain/image.js';

/** Bytes of an image's start needed to find its partition table: a GPT header sits at LBA 1, which is byte 4096 on 4Kn disks. */
export const PARTITION_SNIFF_BYTES = 4096 + 512;

/**
 * Bytes of an image's start that hold a GPT's header and its usual 128 entries of 128 bytes
 * (LBA 2-33 on 512-byte sectors), so partition names can be read from the head alone.
 */
export const PARTITION_TABLE_BYTES = 34 * 512;

const GPT_SIGNATURE = [0x45, 0x46, 0x49, 0x20, 0x50, 0x41, 0x52, 0x54]; // "EFI PART"
const GPT_HEADER_OFFSETS = [512, 4096];
const MBR_ENTRIES_OFFSET = 446;
const MBR_ENTRY_BYTES = 16;
/** Entries past this are not read: no real image has more, and a hostile header may claim millions. */
const MAX_GPT_ENTRIES = 256;

function hasAt(bytes: Uint8Array, offset: number, signature: readonly number[]): boolean {
  return bytes.length >= offset + signature.length && signature.every((b, i) => bytes[offset + i] === b);
}

/**
 * The partition table a raw disk image starts with. A 0x55AA boot signature alone is not enough:
 * a FAT volume's boot sector has one too, so the four MBR entries must also look like entries
 * (status 0x00 or 0x80, at least one with a type).
 */
export function detectPartitionTable(head: Uint8Array): PartitionTableType {
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

const MBR_TYPES: Record<number, string> = {
  0x01: 'FAT12',
  0x04: 'FAT16',
  0x05: 'Extended',
  0x06: 'FAT16',
  0x07: 'NTFS/exFAT',
  0x0b: 'FAT32',
  0x0c: 'FAT32 (LBA)',
  0x0e: 'FAT16 (LBA)',
  0x0f: 'Extended (LBA)',
  0x82: 'Linux swap',
  0x83: 'Linux',
  0x8e: 'Linux LVM',
  0xa5: 'FreeBSD',
  0xee: 'GPT protective',
  0xef: 'EFI System',
};

const GPT_TYPES: Record<string, string> = {
  'C12A7328-F81F-11D2-BA4B-00A0C93EC93B': 'EFI System',
  '0FC63DAF-8483-4772-8E79-3D69D8477DE4': 'Linux filesystem',
  '0657FD6D-A4AB-43C4-84E5-0933C84B4F4F': 'Linux swap',
  'EBD0A0A2-B9E5-4433-87C0-68B6B72699C7': 'Microsoft basic data',
  '21686148-6449-6E6F-744E-656564454649': 'BIOS boot',
  '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709': 'Linux root (x86-64)',
  'B921B045-1DF0-41C3-AF44-4C6F280D3FAE': 'Linux root (ARM64)',
  'BC13C2FF-59E6-4262-A352-B275FD6F7172': 'Linux extended boot',
};

/** A GUID as GPT stores it (first three fields little-endian), in its usual text form. */
function guidText(bytes: Uint8Array, at: number): string {
  const hex = (from: number, to: number, reverse: boolean) => {
    const part = Array.from(bytes.subarray(at + from, at + to), (b) => b.toString(16).padStart(2, '0'));
    return (reverse ? part.reverse() : part).join('');
  };
  return `${hex(0, 4, true)}-${hex(4, 6, true)}-${hex(6, 8, true)}-${hex(8, 10, false)}-${hex(10, 16, false)}`.toUpperCase();
}

function readU64(view: DataView, at: number): number {
  return Number(view.getBigUint64(at, true));
}

/** The fields of a GPT header that say where its entries are and which sectors partitions may use. */
export interface GptHeader {
  /** Its sector size: the header is at LBA 1, so at byte 512 or 4096. */
  sector: number;
  headerSize: number;
  headerCrc: number;
  myLba: number;
  /** Where the backup header is: the drive's last sector, as the image was made. */
  alternateLba: number;
  firstUsableLba: number;
  lastUsableLba: number;
  entriesAt: number;
  /** Entries as the header gives their number (a hostile one may claim millions). */
  entries: number;
  entrySize: number;
  entriesCrc: number;
}

/** The GPT header in an image's first PARTITION_SNIFF_BYTES, or null when there is none. */
export function gptHeader(head: Uint8Array): GptHeader | null {
  const sector = GPT_HEADER_OFFSETS.find((offset) => hasAt(head, offset, GPT_SIGNATURE));
  if (sector === undefined || head.length < sector + 92) return null;
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  return {
    sector,
    headerSize: view.getUint32(sector + 12, true),
    headerCrc: view.getUint32(sector + 16, true),
    myLba: readU64(view, sector + 24),
    alternateLba: readU64(view, sector + 32),
    firstUsableLba: readU64(view, sector + 40),
    lastUsableLba: readU64(view, sector + 48),
    entriesAt: readU64(view, sector + 72) * sector,
    entries: view.getUint32(sector + 80, true),
    entrySize: view.getUint32(sector + 84, true),
    entriesCrc: view.getUint32(sector + 88, true),
  };
}

/** One used GPT entry: where its partition is, in sectors, and what it is. */
export interface GptEntry {
  typeGuid: string;
  firstLba: number;
  lastLba: number;
  name: string;
}

/** The GPT entry at byte `at` of `bytes`, or null where it is unused (a zero type). */
export function gptEntry(bytes: Uint8Array, at: number): GptEntry | null {
  const typeGuid = guidText(bytes, at);
  if (/^[0-]+$/.test(typeGuid)) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const name = new TextDecoder('utf-16le').decode(bytes.subarray(at + 56, at + 128)).replace(/\0.*$/s, '');
  return { typeGuid, firstLba: readU64(view, at + 32), lastLba: readU64(view, at + 40), name };
}

/** The display name of a GPT partition type. */
export function gptTypeName(typeGuid: string): string {
  return GPT_TYPES[typeGuid] ?? typeGuid;
}

function gptPartitions(head: Uint8Array): PartitionEntry[] {
  const header = gptHeader(head);
  if (header === null || header.entrySize < 128) return [];
  const { sector } = header;
  const count = Math.min(header.entries, MAX_GPT_ENTRIES);
  const partitions: PartitionEntry[] = [];
  for (let i = 0; i < count; i++) {
    const at = header.entriesAt + i * header.entrySize;
    if (at + 128 > head.length) break;
    const entry = gptEntry(head, at);
    if (entry === null) continue;
    partitions.push({
      number: i + 1,
      offset: entry.firstLba * sector,
      size: (entry.lastLba - entry.firstLba + 1) * sector,
      type: gptTypeName(entry.typeGuid),
      label: entry.name === '' ? null : entry.name,
    });
  }
  return partitions;
}

/** One of the four primary entries of an MBR, as stored. */
export interface MbrEntry {
  /** 1-4. */
  number: number;
  type: number;
  firstSector: number;
  sectors: number;
}

/** The MBR's four primary entries that are in use (a type and a size). */
export function mbrEntries(head: Uint8Array): MbrEntry[] {
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const entries: MbrEntry[] = [];
  for (let i = 0; i < 4; i++) {
    const at = MBR_ENTRIES_OFFSET + i * MBR_ENTRY_BYTES;
    if (head.length < at + MBR_ENTRY_BYTES) break;
    const type = head[at + 4] ?? 0;
    const sectors = view.getUint32(at + 12, true);
    if (type === 0 || sectors === 0) continue;
    entries.push({ number: i + 1, type, firstSector: view.getUint32(at + 8, true), sectors });
  }
  return entries;
}

function mbrPartitions(head: Uint8Array): PartitionEntry[] {
  return mbrEntries(head).map(({ number, type, firstSector, sectors }) => ({
    number,
    offset: firstSector * 512,
    size: sectors * 512,
    type: MBR_TYPES[type] ?? `type 0x${type.toString(16).padStart(2, '0')}`,
    label: null,
  }));
}

/**
 * The partition table of an image's first bytes (PARTITION_TABLE_BYTES of them for GPT names),
 * with each partition's place, type and GPT name. Filesystem labels need the partitions' own
 * first bytes: see filesystemLabel.
 */
export function readPartitionTable(head: Uint8Array): PartitionTable {
  const type = detectPartitionTable(head);
  return { type, partitions: type === 'gpt' ? gptPartitions(head) : type === 'mbr' ? mbrPartitions(head) : [] };
}

/** Bytes of a partition's start that hold the labels filesystemLabel reads (ext's superblock ends at 2048). */
export const FILESYSTEM_SNIFF_BYTES = 2048;

function ascii(bytes: Uint8Array, from: number, to: number): string | null {
  const text = String.fromCharCode(...bytes.subarray(from, to))
    .replace(/\0.*$/s, '')
    .trim();
  return text === '' || text === 'NO NAME' || /[^\x20-\x7e]/.test(text) ? null : text;
}

/** The label of the filesystem starting at `bytes` (FAT12/16/32, ext2/3/4), or null. */
export function filesystemLabel(bytes: Uint8Array): string | null {
  if (bytes.length >= 1024 + 0x88 && bytes[1024 + 0x38] === 0x53 && bytes[1024 + 0x39] === 0xef)
    return ascii(bytes, 1024 + 0x78, 1024 + 0x88);
  if (bytes[510] === 0x55 && bytes[511] === 0xaa) {
    if (ascii(bytes, 0x52, 0x5a)?.startsWith('FAT32')) return ascii(bytes, 0x47, 0x52);
    if (ascii(bytes, 0x36, 0x3e)?.startsWith('FAT')) return ascii(bytes, 0x2b, 0x36);
  }
  return null;
}
