/**
 * An ISO 9660 volume's tree, with its long names: Rock Ridge's NM where present (xorriso and
 * genisoimage -R write it), else Joliet's UCS-2 tree, else the 8.3 names without their ";1".
 * Files over 4 GiB are recorded as several records of one name (multi-extent): their extents are
 * joined here.
 */
import { jobError } from '../../common/domain/failure.js';
import type { ReadAt } from '../../node/read-at.js';
import {
  checkedExtent,
  checkedName,
  MAX_DIRECTORY_BYTES,
  readExactly,
  SECTOR,
  type DiscEntry,
  type DiscVolume,
} from './volume.js';

/** Byte 1 of every volume descriptor, from sector 16 on. */
const STANDARD_ID = 'CD001';
/** Volume descriptors looked at before giving up on a terminator: real discs have 3 to 5. */
const MAX_DESCRIPTORS = 32;
const ROOT_RECORD_OFFSET = 156;
const FLAG_DIRECTORY = 0x02;
const FLAG_MULTI_EXTENT = 0x80;

/** What sectors 16 and on say: the volume descriptors this reader and the classification use. */
export interface VolumeDescriptors {
  primary: Buffer | null;
  joliet: Buffer | null;
  /** An El Torito boot record (type 0, "EL TORITO SPECIFICATION"). */
  elTorito: boolean;
  /** UDF's "NSR02"/"NSR03" in the extended area after the ISO 9660 descriptors. */
  udf: boolean;
}

/** Reads the volume descriptors from sector 16; an image with none of either kind has all null/false. */
export async function readDescriptors(readAt: ReadAt): Promise<VolumeDescriptors> {
  const found: VolumeDescriptors = { primary: null, joliet: null, elTorito: false, udf: false };
  const area = await readAt(16 * SECTOR, MAX_DESCRIPTORS * SECTOR);
  for (let at = 0; at + SECTOR <= area.length; at += SECTOR) {
    const sector = area.subarray(at, at + SECTOR);
    const id = sector.toString('latin1', 1, 6);
    if (id === 'NSR02' || id === 'NSR03') found.udf = true;
    if (id !== STANDARD_ID) continue;
    const type = sector[0];
    if (type === 0 && sector.toString('latin1', 7, 30) === 'EL TORITO SPECIFICATION') found.elTorito = true;
    if (type === 1) found.primary ??= sector;
    // Joliet: a supplementary descriptor whose escape sequence names UCS-2 level 1, 2 or 3.
    if (type === 2 && sector[88] === 0x25 && sector[89] === 0x2f && [0x40, 0x43, 0x45].includes(sector[90] ?? 0))
      found.joliet ??= sector;
  }
  return found;
}

interface RawRecord {
  name: string;
  flags: number;
  extent: number;
  size: number;
}

/** Rock Ridge's alternate name (NM entries, possibly continued) in a record's system use area. */
function rockRidgeName(systemUse: Buffer): string | null {
  let name: string | null = null;
  for (let at = 0; at + 4 <= systemUse.length;) {
    const length = systemUse[at + 2] ?? 0;
    if (length < 4 || at + length > systemUse.length) break;
    if (systemUse.toString('latin1', at, at + 2) === 'NM' && ((systemUse[at + 4] ?? 0) & 0x06) === 0) {
      name = (name ?? '') + systemUse.toString('utf8', at + 5, at + length);
    }
    at += length;
  }
  return name;
}

function recordName(record: Buffer, joliet: boolean): string | null {
  const nameLength = record[32] ?? 0;
  const raw = record.subarray(33, 33 + nameLength);
  if (nameLength === 1 && (raw[0] === 0 || raw[0] === 1)) return null; // "." and ".."
  if (joliet) return Buffer.from(raw).swap16().toString('utf16le').replace(/;\d+$/, '');
  const systemUse = record.subarray(33 + nameLength + (nameLength % 2 === 0 ? 1 : 0));
  return rockRidgeName(systemUse) ?? raw.toString('latin1').replace(/;\d+$/, '').replace(/\.$/, '');
}

/** The records of a directory's bytes; a zero length byte means the rest of that sector is padding. */
function parseRecords(bytes: Buffer, joliet: boolean): RawRecord[] {
  const records: RawRecord[] = [];
  for (let at = 0; at < bytes.length;) {
    const length = bytes[at] ?? 0;
    if (length === 0) {
      at = (Math.floor(at / SECTOR) + 1) * SECTOR;
      continue;
    }
    const record = bytes.subarray(at, at + length);
    if (length < 34 || record.length < length)
      throw new RangeError(`a directory record at ${at} is ${length} bytes long`);
    const name = recordName(record, joliet);
    if (name !== null)
      records.push({ name, flags: record[25] ?? 0, extent: record.readUInt32LE(2), size: record.readUInt32LE(10) });
    at += length;
  }
  return records;
}

/** A volume's tree, read from its primary (or, without Rock Ridge names, Joliet) descriptor. */
export function iso9660Volume(
  readAt: ReadAt,
  imageSize: number,
  image: string,
  descriptor: Buffer,
  joliet: boolean,
): DiscVolume {
  const entryOf = (record: RawRecord, extents: [number, number][]): DiscEntry => ({
    name: checkedName(record.name, image),
    directory: (record.flags & FLAG_DIRECTORY) !== 0,
    size: extents.reduce((sum, [, length]) => sum + length, 0),
    extents,
    inline: null,
    place: extents[0]?.[0] ?? -1,
  });
  const extentOf = (record: RawRecord): [number, number] =>
    checkedExtent(record.extent * SECTOR, record.size, imageSize, image, record.name);
  const rootBytes = descriptor.subarray(ROOT_RECORD_OFFSET, ROOT_RECORD_OFFSET + 34);
  const root: DiscEntry = {
    name: '',
    directory: true,
    size: rootBytes.readUInt32LE(10),
    extents: [
      checkedExtent(
        rootBytes.readUInt32LE(2) * SECTOR,
        rootBytes.readUInt32LE(10),
        imageSize,
        image,
        'the root directory',
      ),
    ],
    inline: null,
    place: rootBytes.readUInt32LE(2) * SECTOR,
  };
  return {
    kind: 'iso9660',
    root,
    async list(directory) {
      const [offset, length] = directory.extents[0] ?? [0, 0];
      if (length > MAX_DIRECTORY_BYTES)
        throw jobError(
          'source-corrupt',
          `${image} has a folder ${JSON.stringify(directory.name)} of ${length} bytes of entries, more than any installer disc holds; Sluice stops reading it.`,
        );
      let records: RawRecord[];
      try {
        records = parseRecords(await readExactly(readAt, offset, length, image), joliet);
      } catch (error) {
        if (error instanceof RangeError)
          throw jobError(
            'source-corrupt',
            `${image} is damaged: in the folder ${JSON.stringify(directory.name)}, ${error.message}.`,
          );
        throw error;
      }
      const entries: DiscEntry[] = [];
      let pending: [number, number][] = [];
      for (const record of records) {
        pending.push(extentOf(record));
        if ((record.flags & FLAG_MULTI_EXTENT) !== 0) continue;
        entries.push(entryOf(record, pending));
        pending = [];
      }
      return entries;
    },
  };
}

/** Whether a volume's primary tree carries Rock Ridge names (an "RR" or "NM" entry in its root's first record). */
export async function hasRockRidge(readAt: ReadAt, descriptor: Buffer): Promise<boolean> {
  const root = descriptor.subarray(ROOT_RECORD_OFFSET, ROOT_RECORD_OFFSET + 34);
  const first = await readAt(root.readUInt32LE(2) * SECTOR, Math.min(SECTOR, root.readUInt32LE(10)));
  const length = first[0] ?? 0;
  const systemUse = first.subarray(34, length);
  return systemUse.includes('SP') || systemUse.includes('RR') || systemUse.includes('PX');
}
