/**
 * The FAT boot partition of an image, read and changed without mounting it: the one filesystem
 * customisation writes to. Reads go through a ReadAt over the decoded image (any offset for a raw
 * file, front to back through a decoder otherwise: user/images/decode/decoded-reader.ts), in the order
 * the volume lays its parts out (boot sector, FAT, root directory, file data), and each is
 * bounded by the partition's size and by the limits below, never by what the volume claims.
 *
 * Changes are planned, not written: FatEditor keeps its own copies of the FAT and the root
 * directory, allocates clusters first-fit (so the same image and files give the same bytes, which
 * `sluice verify` relies on), and hands back the byte ranges that differ from the image, for the
 * helper to write onto the card after the image (see writer/overlay.ts). Only the root directory
 * is written to: every file customisation writes lives there.
 */
import { jobError } from '../../common/domain/failure.js';
import type { ReadAt } from '../../node/read-at.js';

/**
 * FAT32 allows 2^28 clusters; a boot partition has tens of thousands. Past this many bytes of FAT
 * (4 million FAT32 clusters: a 16 GiB volume of 4 KiB clusters) the volume is not a boot
 * partition, and reading its table would cost more memory than the probe has.
 */
export const MAX_FAT_BYTES = 16 * 1024 * 1024;
/** A directory holds at most 65,536 entries of 32 bytes (the FAT specification's limit). */
const MAX_DIRECTORY_BYTES = 65536 * 32;
/** The files customisation reads (cmdline.txt, config.txt) are a few hundred bytes. */
export const MAX_READ_FILE_BYTES = 64 * 1024;

const ENTRY_BYTES = 32;
const ATTR_LFN = 0x0f;
const ATTR_DIRECTORY = 0x10;
const ATTR_VOLUME = 0x08;
const ATTR_ARCHIVE = 0x20;
/** NT's flags for an 8.3 name shown in lower case (base, extension). */
const LOWER_BASE = 0x08;
const LOWER_EXT = 0x10;

/** Where a FAT volume's parts are, in bytes from the start of its partition. */
export interface FatGeometry {
  type: 12 | 16 | 32;
  bytesPerSector: number;
  clusterBytes: number;
  /** Reserved sectors: the first FAT's offset. */
  fatOffset: number;
  fatCount: number;
  /** Bytes of one FAT as the boot sector sizes it. */
  fatBytes: number;
  /** FAT12/16's fixed root directory: its offset and size. */
  rootOffset: number;
  rootBytes: number;
  /** FAT32's root directory cluster. */
  rootCluster: number;
  dataOffset: number;
  /** Data clusters: they are numbered 2 to clusterCount + 1. */
  clusterCount: number;
  /** FAT32's FSInfo sector offset, or null. */
  fsInfoOffset: number | null;
}

/**
 * The geometry a FAT boot sector describes, or null when `sector` is not one (or describes a volume
 * larger than the `partitionBytes` it lives in).
 */
export function parseBootSector(sector: Buffer, partitionBytes: number): FatGeometry | null {
  if (sector.length < 512 || sector[510] !== 0x55 || sector[511] !== 0xaa) return null;
  if (sector[0] !== 0xeb && sector[0] !== 0xe9) return null;
  const bytesPerSector = sector.readUInt16LE(11);
  const sectorsPerCluster = sector.readUInt8(13);
  const reserved = sector.readUInt16LE(14);
  const fatCount = sector.readUInt8(16);
  const rootEntries = sector.readUInt16LE(17);
  const totalSectors = sector.readUInt16LE(19) || sector.readUInt32LE(32);
  const fatSectors = sector.readUInt16LE(22) || sector.readUInt32LE(36);
  if (![512, 1024, 2048, 4096].includes(bytesPerSector)) return null;
  if (sectorsPerCluster === 0 || (sectorsPerCluster & (sectorsPerCluster - 1)) !== 0) return null;
  if (reserved === 0 || fatCount === 0 || fatCount > 4 || fatSectors === 0 || totalSectors === 0) return null;
  const rootBytes = rootEntries * ENTRY_BYTES;
  const rootSectors = Math.ceil(rootBytes / bytesPerSector);
  const dataSector = reserved + fatCount * fatSectors + rootSectors;
  if (dataSector >= totalSectors || totalSectors * bytesPerSector > partitionBytes) return null;
  const clusterCount = Math.floor((totalSectors - dataSector) / sectorsPerCluster);
  const type = clusterCount < 4085 ? 12 : clusterCount < 65525 ? 16 : 32;
  const fatBytes = fatSectors * bytesPerSector;
  // The FAT must have an entry for every cluster.
  if (Math.ceil(((clusterCount + 2) * (type === 12 ? 12 : type === 16 ? 16 : 32)) / 8) > fatBytes) return null;
  if (type === 32 && (rootEntries !== 0 || sector.readUInt16LE(22) !== 0)) return null;
  if (type !== 32 && rootEntries === 0) return null;
  const rootCluster = type === 32 ? sector.readUInt32LE(44) : 0;
  if (type === 32 && (rootCluster < 2 || rootCluster > clusterCount + 1)) return null;
  const fsInfoSector = type === 32 ? sector.readUInt16LE(48) : 0;
  return {
    type,
    bytesPerSector,
    clusterBytes: sectorsPerCluster * bytesPerSector,
    fatOffset: reserved * bytesPerSector,
    fatCount,
    fatBytes,
    rootOffset: (reserved + fatCount * fatSectors) * bytesPerSector,
    rootBytes,
    rootCluster,
    dataOffset: dataSector * bytesPerSector,
    clusterCount,
    fsInfoOffset: type === 32 && fsInfoSector > 0 && fsInfoSector < reserved ? fsInfoSector * bytesPerSector : null,
  };
}

/** One file or directory of a directory, as its entries describe it. */
export interface FatEntry {
  /** The long name when there is one, else the 8.3 name as it is shown. */
  name: string;
  /** The 8.3 name's 11 bytes, as stored. */
  shortName: string;
  /** Index of the 8.3 entry in the directory; its long-name entries come just before it. */
  slot: number;
  attributes: number;
  cluster: number;
  size: number;
}

/** The 8.3 name's checksum, which each of its long-name entries carries. */
function shortNameChecksum(raw: Buffer): number {
  let sum = 0;
  for (let i = 0; i < 11; i++) sum = (((sum & 1) << 7) + (sum >> 1) + (raw[i] ?? 0)) & 0xff;
  return sum;
}

/** An 8.3 name as shown: "KERNEL  IMG" → "KERNEL.IMG", in lower case where NT's flags say so. */
function shownShortName(raw: Buffer, flags: number): string {
  let base = raw.toString('latin1', 0, 8).trimEnd();
  let ext = raw.toString('latin1', 8, 11).trimEnd();
  if (base.startsWith('\u0005')) base = `\u00e5${base.slice(1)}`;
  if ((flags & LOWER_BASE) !== 0) base = base.toLowerCase();
  if ((flags & LOWER_EXT) !== 0) ext = ext.toLowerCase();
  return ext === '' ? base : `${base}.${ext}`;
}

/** The UTF-16 characters of one long-name entry, up to its terminator. */
function longNamePart(entry: Buffer): { text: string; ended: boolean } {
  const units: number[] = [];
  for (const [from, count] of [
    [1, 5],
    [14, 6],
    [28, 2],
  ] as const) {
    for (let i = 0; i < count; i++) {
      const unit = entry.readUInt16LE(from + 2 * i);
      if (unit === 0x0000) return { text: String.fromCharCode(...units), ended: true };
      units.push(unit);
    }
  }
  return { text: String.fromCharCode(...units), ended: false };
}

/** The entries of a directory's bytes: live files and directories, without the volume label or "." and "..". */
export function listDirectory(bytes: Buffer): FatEntry[] {
  const entries: FatEntry[] = [];
  let parts: string[] = [];
  let expected = -1;
  let checksum = -1;
  for (let slot = 0; slot * ENTRY_BYTES + ENTRY_BYTES <= bytes.length; slot++) {
    const entry = bytes.subarray(slot * ENTRY_BYTES, (slot + 1) * ENTRY_BYTES);
    const first = entry[0] ?? 0;
    if (first === 0x00) break;
    const attributes = entry[11] ?? 0;
    if (first === 0xe5) {
      parts = [];
      continue;
    }
    if ((attributes & 0x3f) === ATTR_LFN) {
      const sequence = first & 0x1f;
      if ((first & 0x40) !== 0) {
        parts = [];
        expected = sequence;
        checksum = entry[13] ?? -1;
      }
      if (sequence === 0 || sequence !== expected || entry[13] !== checksum) {
        parts = [];
        expected = -1;
        continue;
      }
      parts.unshift(longNamePart(entry).text);
      expected -= 1;
      continue;
    }
    const raw = entry.subarray(0, 11);
    const longName = expected === 0 && parts.length > 0 && shortNameChecksum(raw) === checksum ? parts.join('') : null;
    parts = [];
    expected = -1;
    if ((attributes & ATTR_VOLUME) !== 0 || first === 0x2e) continue;
    entries.push({
      name: longName ?? shownShortName(raw, entry[12] ?? 0),
      shortName: raw.toString('latin1'),
      slot,
      attributes,
      cluster: (entry.readUInt16LE(20) << 16) | entry.readUInt16LE(26),
      size: entry.readUInt32LE(28),
    });
  }
  return entries;
}

/** The file called `name` (as vfat compares names: either name, any case), or null. */
export function findEntry(entries: readonly FatEntry[], name: string): FatEntry | null {
  const wanted = name.toLowerCase();
  return (
    entries.find(
      (e) =>
        e.name.toLowerCase() === wanted ||
        shownShortName(Buffer.from(e.shortName, 'latin1'), 0).toLowerCase() === wanted,
    ) ?? null
  );
}

/** The FAT's entries: 12, 16 or 28 bits each. */
class AllocationTable {
  constructor(
    readonly bytes: Buffer,
    private readonly type: 12 | 16 | 32,
    readonly clusterCount: number,
  ) {}

  get(n: number): number {
    if (this.type === 32) return this.bytes.readUInt32LE(n * 4) & 0x0fffffff;
    if (this.type === 16) return this.bytes.readUInt16LE(n * 2);
    const pair = this.bytes.readUInt16LE(Math.floor((n * 3) / 2));
    return n % 2 === 0 ? pair & 0xfff : pair >> 4;
  }

  set(n: number, value: number): void {
    if (this.type === 32)
      this.bytes.writeUInt32LE(((this.bytes.readUInt32LE(n * 4) & 0xf0000000) | (value & 0x0fffffff)) >>> 0, n * 4);
    else if (this.type === 16) this.bytes.writeUInt16LE(value & 0xffff, n * 2);
    else {
      const at = Math.floor((n * 3) / 2);
      const pair = this.bytes.readUInt16LE(at);
      this.bytes.writeUInt16LE(
        n % 2 === 0 ? (pair & 0xf000) | (value & 0xfff) : (pair & 0x000f) | ((value & 0xfff) << 4),
        at,
      );
    }
  }

  /** The value that ends a chain. */
  get endOfChain(): number {
    return this.type === 32 ? 0x0fffffff : this.type === 16 ? 0xffff : 0xfff;
  }

  isData(n: number): boolean {
    return n >= 2 && n <= this.clusterCount + 1;
  }

  /** The clusters of the chain from `start`; a chain that leaves the volume or loops is cut there. */
  chain(start: number): number[] {
    const clusters: number[] = [];
    const seen = new Set<number>();
    for (let n = start; this.isData(n) && !seen.has(n) && clusters.length <= this.clusterCount; n = this.get(n)) {
      seen.add(n);
      clusters.push(n);
    }
    return clusters;
  }

  freeCount(): number {
    let free = 0;
    for (let n = 2; n <= this.clusterCount + 1; n++) if (this.get(n) === 0) free += 1;
    return free;
  }
}

/** One byte range of the partition to write, in the order the plan writes them. */
export interface FatWrite {
  /** Bytes from the start of the partition. */
  offset: number;
  bytes: Buffer;
}

/** Runs of bytes where `after` differs from `before`, closer than `gap` merged. */
function differingRuns(before: Buffer, after: Buffer, gap = 16): { start: number; end: number }[] {
  const runs: { start: number; end: number }[] = [];
  for (let i = 0; i < after.length; i++) {
    if (before[i] === after[i]) continue;
    const last = runs.at(-1);
    if (last !== undefined && i - last.end <= gap) last.end = i + 1;
    else runs.push({ start: i, end: i + 1 });
  }
  return runs;
}

/** A directory's bytes and where each piece of them lives on the partition. */
interface DirectoryBytes {
  bytes: Buffer;
  /** Pieces in order; `fresh` ones are new clusters, written whole. */
  pieces: { offset: number; length: number; fresh: boolean }[];
  /** The clusters (FAT32), for growing it. */
  clusters: number[];
}

/** A file to write into the root directory. */
export interface NewFile {
  name: string;
  bytes: Buffer;
}

/**
 * A FAT volume, read, with changes planned against it. Create with openFat; add files with
 * writeFile; take the writes with writes().
 */
export class FatEditor {
  private readonly originalFat: Buffer;
  private readonly originalRoot: Buffer;
  private readonly data = new Map<number, Buffer>();
  /** Clusters written last: cmdline.txt's, which makes the card run what the other files set up. */
  private readonly lastClusters = new Set<number>();
  private fsInfo: { before: Buffer; after: Buffer } | null;

  private constructor(
    readonly geometry: FatGeometry,
    private readonly fat: AllocationTable,
    private readonly root: DirectoryBytes,
    fsInfo: Buffer | null,
    private readonly readAt: ReadAt,
    private readonly offset: number,
  ) {
    this.originalFat = Buffer.from(fat.bytes);
    this.originalRoot = Buffer.from(root.bytes);
    this.fsInfo = fsInfo === null ? null : { before: fsInfo, after: Buffer.from(fsInfo) };
  }

  /** Reads the FAT volume of the partition at `offset` (`size` bytes); null when it is not one. */
  static async open(readAt: ReadAt, offset: number, size: number): Promise<FatEditor | null> {
    const bootSector = await readAt(offset, 512);
    const geometry = parseBootSector(bootSector, size);
    if (geometry === null) return null;
    const { type, clusterCount } = geometry;
    const needed = Math.ceil(((clusterCount + 2) * (type === 12 ? 12 : type === 16 ? 16 : 32)) / 8);
    if (needed > MAX_FAT_BYTES)
      throw jobError(
        'cannot-customise',
        `The boot partition's FAT is ${Math.round(needed / 1024 / 1024)} MiB, larger than the ${MAX_FAT_BYTES / 1024 / 1024} MiB of a boot partition: Sluice does not customise it.`,
      );
    const fsInfo = geometry.fsInfoOffset === null ? null : await readAt(offset + geometry.fsInfoOffset, 512);
    const fatBytes = await readAt(offset + geometry.fatOffset, needed);
    if (fatBytes.length < needed) throw jobError('source-truncated', 'The image ends inside its boot partition’s FAT.');
    // Three extra bytes let FAT12's 16-bit reads of the last entry stay inside the buffer.
    const fat = new AllocationTable(Buffer.concat([fatBytes, Buffer.alloc(3)]), type, clusterCount);
    const root =
      type === 32
        ? await readClusters(readAt, offset, geometry, fat, geometry.rootCluster)
        : await readRegion(readAt, offset, geometry.rootOffset, geometry.rootBytes);
    const validFsInfo =
      fsInfo !== null && fsInfo.readUInt32LE(0) === 0x41615252 && fsInfo.readUInt32LE(484) === 0x61417272
        ? fsInfo
        : null;
    return new FatEditor(geometry, fat, root, validFsInfo, readAt, offset);
  }

  /** The root directory's files. */
  entries(): FatEntry[] {
    return listDirectory(this.root.bytes);
  }

  /** The content of a root-directory file, or null when there is none; at most MAX_READ_FILE_BYTES. */
  async readFile(name: string): Promise<Buffer | null> {
    const entry = findEntry(this.entries(), name);
    if (entry === null || (entry.attributes & ATTR_DIRECTORY) !== 0) return null;
    if (entry.size > MAX_READ_FILE_BYTES)
      throw jobError(
        'cannot-customise',
        `${name} on the boot partition has ${entry.size} bytes, more than the ${MAX_READ_FILE_BYTES} such a file has.`,
      );
    const clusters = this.fat.chain(entry.cluster).slice(0, Math.ceil(entry.size / this.geometry.clusterBytes));
    const pieces = await Promise.all(
      clusters.map((c) => this.readAt(this.offset + this.clusterOffset(c), this.geometry.clusterBytes)),
    );
    const bytes = Buffer.concat(pieces);
    if (bytes.length < entry.size)
      throw jobError(
        'cannot-customise',
        `${name} on the boot partition is shorter than its directory entry says (${bytes.length} of ${entry.size} bytes): the filesystem is damaged.`,
      );
    return bytes.subarray(0, entry.size);
  }

  /** Free bytes: free clusters times the cluster size. */
  freeBytes(): number {
    return this.fat.freeCount() * this.geometry.clusterBytes;
  }

  /** Clusters the files need beyond what their own existing chains give back. */
  clustersNeeded(files: readonly NewFile[]): number {
    let needed = 0;
    for (const file of files) {
      const existing = findEntry(this.entries(), file.name);
      const had = existing === null ? 0 : this.fat.chain(existing.cluster).length;
      needed += this.clustersFor(file.bytes.length) - had;
    }
    return needed;
  }

  /**
   * Writes `files` into the root directory, replacing files of the same name; `last` names the one
   * whose data is written after everything else. Throws cannot-customise, changing nothing, when
   * the volume has no room for them.
   */
  writeFiles(files: readonly NewFile[], last: string | null = null): void {
    const free = this.fat.freeCount();
    const newNames = files.filter((f) => findEntry(this.entries(), f.name) === null).map((f) => f.name);
    // A FAT32 root directory without room for the new entries grows by a cluster.
    const needed = this.clustersNeeded(files) + (this.geometry.type === 32 && !this.entriesFit(newNames) ? 1 : 0);
    if (needed > free) {
      const kib = (clusters: number) => `${Math.ceil((clusters * this.geometry.clusterBytes) / 1024)} KiB`;
      throw jobError(
        'cannot-customise',
        `The boot partition is too full for the customisation: ${files.map((f) => f.name).join(', ')} need ${kib(needed)} more and it has ${kib(free)} free. Nothing was written.`,
      );
    }
    const stamp = this.newestStamp();
    for (const file of files) this.writeFile(file, stamp, file.name === last);
  }

  /**
   * The byte ranges that differ from the image, in the order to write them: new file data, the
   * FATs, the root directory, FSInfo, and last the data of the file named last.
   */
  writes(): FatWrite[] {
    const out: FatWrite[] = [];
    const dataWrites = (last: boolean) => {
      for (const [cluster, bytes] of [...this.data].sort(([a], [b]) => a - b)) {
        if (this.lastClusters.has(cluster) === last) out.push({ offset: this.clusterOffset(cluster), bytes });
      }
    };
    dataWrites(false);
    const fatRuns = differingRuns(this.originalFat, this.fat.bytes.subarray(0, this.originalFat.length));
    for (let copy = 0; copy < this.geometry.fatCount; copy++) {
      for (const run of fatRuns)
        out.push({
          offset: this.geometry.fatOffset + copy * this.geometry.fatBytes + run.start,
          bytes: Buffer.from(this.fat.bytes.subarray(run.start, run.end)),
        });
    }
    let at = 0;
    for (const piece of this.root.pieces) {
      const after = this.root.bytes.subarray(at, at + piece.length);
      if (piece.fresh) out.push({ offset: piece.offset, bytes: Buffer.from(after) });
      else {
        const before = this.originalRoot.subarray(at, at + piece.length);
        for (const run of differingRuns(before, after))
          out.push({ offset: piece.offset + run.start, bytes: Buffer.from(after.subarray(run.start, run.end)) });
      }
      at += piece.length;
    }
    if (this.fsInfo !== null && this.geometry.fsInfoOffset !== null) {
      if (this.fsInfo.after.readUInt32LE(488) !== 0xffffffff)
        this.fsInfo.after.writeUInt32LE(this.fat.freeCount(), 488);
      for (const run of differingRuns(this.fsInfo.before, this.fsInfo.after))
        out.push({
          offset: this.geometry.fsInfoOffset + run.start,
          bytes: Buffer.from(this.fsInfo.after.subarray(run.start, run.end)),
        });
    }
    dataWrites(true);
    return out;
  }

  private clusterOffset(cluster: number): number {
    return this.geometry.dataOffset + (cluster - 2) * this.geometry.clusterBytes;
  }

  private clustersFor(bytes: number): number {
    return Math.ceil(bytes / this.geometry.clusterBytes);
  }

  /** The first free cluster, taken. */
  private allocate(): number {
    for (let n = 2; n <= this.geometry.clusterCount + 1; n++) {
      if (this.fat.get(n) === 0) {
        this.fat.set(n, this.fat.endOfChain);
        return n;
      }
    }
    throw jobError('cannot-customise', 'The boot partition has no free cluster left. Nothing was written.');
  }

  /** The newest write time among the root directory's entries: new entries get it, so the same image gives the same bytes. */
  private newestStamp(): { date: number; time: number } {
    let best = { date: 0x21, time: 0 };
    for (const entry of this.entries()) {
      const raw = this.root.bytes.subarray(entry.slot * ENTRY_BYTES, (entry.slot + 1) * ENTRY_BYTES);
      const date = raw.readUInt16LE(24);
      const time = raw.readUInt16LE(22);
      if (date > best.date || (date === best.date && time > best.time)) best = { date, time };
    }
    return best;
  }

  private writeFile(file: NewFile, stamp: { date: number; time: number }, last: boolean): void {
    const existing = findEntry(this.entries(), file.name);
    const needed = this.clustersFor(file.bytes.length);
    const old = existing === null ? [] : this.fat.chain(existing.cluster);
    const chain = old.slice(0, needed);
    for (const freed of old.slice(needed)) this.fat.set(freed, 0);
    while (chain.length < needed) chain.push(this.allocate());
    chain.forEach((cluster, i) => {
      this.fat.set(cluster, chain[i + 1] ?? this.fat.endOfChain);
      const piece = Buffer.alloc(this.geometry.clusterBytes);
      file.bytes.copy(piece, 0, i * this.geometry.clusterBytes, (i + 1) * this.geometry.clusterBytes);
      this.data.set(cluster, piece);
      if (last) this.lastClusters.add(cluster);
    });
    const first = chain[0] ?? 0;
    const slot = existing?.slot ?? this.addEntries(file.name, stamp);
    const entry = this.root.bytes.subarray(slot * ENTRY_BYTES, (slot + 1) * ENTRY_BYTES);
    entry.writeUInt16LE(first >>> 16, 20);
    entry.writeUInt16LE(first & 0xffff, 26);
    entry.writeUInt32LE(file.bytes.length, 28);
    entry.writeUInt16LE(stamp.time, 22);
    entry.writeUInt16LE(stamp.date, 24);
    entry.writeUInt16LE(stamp.date, 18);
  }

  /** New entries for `name` (long-name entries and the 8.3 one) in free slots; returns the 8.3 entry's slot. */
  private addEntries(name: string, stamp: { date: number; time: number }): number {
    const taken = new Set(this.entries().map((e) => e.shortName));
    const { raw, flags, longName } = shortNameFor(name, taken);
    const longEntries = longName ? slotsFor(name) - 1 : 0;
    const slot = this.freeSlots(longEntries + 1);
    const checksum = shortNameChecksum(raw);
    for (let i = 0; i < longEntries; i++) {
      const sequence = longEntries - i;
      this.root.bytes.set(longNameEntry(name, sequence, sequence === longEntries, checksum), (slot + i) * ENTRY_BYTES);
    }
    const entry = Buffer.alloc(ENTRY_BYTES);
    raw.copy(entry, 0);
    entry[11] = ATTR_ARCHIVE;
    entry[12] = flags;
    entry.writeUInt16LE(stamp.time, 14);
    entry.writeUInt16LE(stamp.date, 16);
    this.root.bytes.set(entry, (slot + longEntries) * ENTRY_BYTES);
    return slot + longEntries;
  }

  /** The first run of `count` free root-directory slots, growing a FAT32 root directory by a cluster when it has none. */
  private freeSlots(count: number): number {
    const found = findFreeRun(this.root.bytes, count);
    if (found !== null) return found;
    if (this.geometry.type !== 32)
      throw jobError(
        'cannot-customise',
        'The boot partition’s root directory is full: it has no room for another file. Nothing was written.',
      );
    // The old end marker would hide the new cluster's entries from every reader: the slots from it
    // on become deleted entries, and the new cluster's zeros end the directory.
    for (let at = 0; at < this.root.bytes.length; at += ENTRY_BYTES)
      if (this.root.bytes[at] === 0x00) this.root.bytes[at] = 0xe5;
    const cluster = this.allocate();
    const last = this.root.clusters.at(-1);
    if (last !== undefined) this.fat.set(last, cluster);
    this.root.clusters.push(cluster);
    const start = this.root.bytes.length / ENTRY_BYTES;
    this.root.bytes = Buffer.concat([this.root.bytes, Buffer.alloc(this.geometry.clusterBytes)]);
    this.root.pieces.push({ offset: this.clusterOffset(cluster), length: this.geometry.clusterBytes, fresh: true });
    return start;
  }

  /** Whether new entries for `names` fit the root directory as it is (else a FAT32 one grows by a cluster). */
  private entriesFit(names: readonly string[]): boolean {
    const trial = Buffer.from(this.root.bytes);
    for (const name of names) {
      const slots = slotsFor(name);
      const slot = findFreeRun(trial, slots);
      if (slot === null) return false;
      trial.fill(0x41, slot * ENTRY_BYTES, (slot + slots) * ENTRY_BYTES);
    }
    return true;
  }
}

/** Directory slots a new entry for `name` takes: its long-name entries and its 8.3 entry (a generous count: a long name is assumed). */
function slotsFor(name: string): number {
  return Math.ceil(name.length / 13) + 1;
}

/**
 * The first slot of a run of `count` free slots in a directory's bytes (deleted entries, or the
 * end marker and what follows it), or null. A run that starts at the end marker and does not fill
 * the directory gets a new end marker after it.
 */
function findFreeRun(bytes: Buffer, count: number): number | null {
  const slots = bytes.length / ENTRY_BYTES;
  let run = 0;
  for (let slot = 0; slot < slots; slot++) {
    const first = bytes[slot * ENTRY_BYTES];
    if (first === 0x00) {
      const start = slot - run;
      if (start + count > slots) return null;
      if (start + count < slots) bytes[(start + count) * ENTRY_BYTES] = 0x00;
      return start;
    }
    run = first === 0xe5 ? run + 1 : 0;
    if (run === count) return slot - count + 1;
  }
  return null;
}

/** A FAT12/16 root directory: a fixed region. */
async function readRegion(readAt: ReadAt, partition: number, offset: number, length: number): Promise<DirectoryBytes> {
  const bytes = await readAt(partition + offset, length);
  if (bytes.length < length)
    throw jobError('source-truncated', 'The image ends inside its boot partition’s root directory.');
  return { bytes, pieces: [{ offset, length, fresh: false }], clusters: [] };
}

/** A directory in clusters (FAT32's root), read cluster by cluster along its chain. */
async function readClusters(
  readAt: ReadAt,
  partition: number,
  geometry: FatGeometry,
  fat: AllocationTable,
  start: number,
): Promise<DirectoryBytes> {
  const clusters = fat.chain(start);
  if (clusters.length * geometry.clusterBytes > MAX_DIRECTORY_BYTES)
    throw jobError(
      'cannot-customise',
      'The boot partition’s root directory is longer than a FAT directory can be: the filesystem is damaged.',
    );
  const pieces = clusters.map((c) => ({
    offset: geometry.dataOffset + (c - 2) * geometry.clusterBytes,
    length: geometry.clusterBytes,
    fresh: false,
  }));
  const parts: Buffer[] = [];
  for (const piece of pieces) {
    const bytes = await readAt(partition + piece.offset, piece.length);
    if (bytes.length < piece.length)
      throw jobError('source-truncated', 'The image ends inside its boot partition’s root directory.');
    parts.push(bytes);
  }
  return { bytes: Buffer.concat(parts), pieces, clusters };
}

/** Characters an 8.3 name may hold besides letters and digits. */
const SHORT_SPECIAL = "$%'-_@~`!(){}^#&";

function isShortChar(ch: string): boolean {
  return /^[A-Z0-9]$/.test(ch) || SHORT_SPECIAL.includes(ch);
}

/**
 * The 8.3 entry for `name`: the name itself when it is a valid 8.3 name in one case (with NT's
 * lower-case flags), else a numbered tail (USER-D~1) with long-name entries for the real name.
 */
function shortNameFor(name: string, taken: ReadonlySet<string>): { raw: Buffer; flags: number; longName: boolean } {
  const dot = name.lastIndexOf('.');
  const base = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot + 1) : '';
  const upper = (text: string) => text.toUpperCase();
  const fits =
    base.length >= 1 &&
    base.length <= 8 &&
    ext.length <= 3 &&
    [...upper(base + ext)].every(isShortChar) &&
    (dot < 0 || dot === name.indexOf('.'));
  const oneCase = (text: string) => text === text.toUpperCase() || text === text.toLowerCase();
  if (fits && oneCase(base) && oneCase(ext)) {
    const raw = Buffer.from(upper(base).padEnd(8) + upper(ext).padEnd(3), 'latin1');
    if (!taken.has(raw.toString('latin1'))) {
      const flags = (base !== upper(base) ? LOWER_BASE : 0) | (ext !== upper(ext) ? LOWER_EXT : 0);
      return { raw, flags, longName: false };
    }
  }
  const clean = (text: string) => [...upper(text)].filter(isShortChar).join('');
  const shortBase = clean(base) || 'FILE';
  const shortExt = clean(ext).slice(0, 3);
  for (let n = 1; n < 1_000_000; n++) {
    const tail = `~${n}`;
    const raw = Buffer.from(shortBase.slice(0, 8 - tail.length) + tail, 'latin1');
    const candidate = raw.toString('latin1').padEnd(8) + shortExt.padEnd(3);
    if (!taken.has(candidate)) return { raw: Buffer.from(candidate, 'latin1'), flags: 0, longName: true };
  }
  throw jobError('cannot-customise', `No free 8.3 name is left for ${name}.`);
}

/** Long-name entry number `sequence` (1-based) of `name`. */
function longNameEntry(name: string, sequence: number, isLast: boolean, checksum: number): Buffer {
  const entry = Buffer.alloc(ENTRY_BYTES);
  entry[0] = sequence | (isLast ? 0x40 : 0);
  entry[11] = ATTR_LFN;
  entry[13] = checksum;
  const units: number[] = [];
  for (let i = 0; i < 13; i++) {
    const index = (sequence - 1) * 13 + i;
    units.push(index < name.length ? name.charCodeAt(index) : index === name.length ? 0x0000 : 0xffff);
  }
  let u = 0;
  for (const [from, count] of [
    [1, 5],
    [14, 6],
    [28, 2],
  ] as const) {
    for (let i = 0; i < count; i++) entry.writeUInt16LE(units[u++] ?? 0xffff, from + 2 * i);
  }
  return entry;
}
