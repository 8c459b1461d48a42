/**
 * An exFAT volume as the SD Association's formatter makes one for an SDXC card: 128 KiB clusters
 * (256 KiB above 512 GiB), one FAT at 1 MiB, the cluster heap on a 4 MiB boundary, and in the heap
 * the allocation bitmap, the up-case table and the root directory, in that order from cluster 2.
 */
import { GiB, KiB, MiB } from '../../common/domain/units.js';
import { alignUp } from '../../writer/job-memory.js';
import { ERASE_ALIGN, type Patch, type VolumeLayout, type VolumeRequest } from './volume.js';
import { exfatLabel } from './label.js';
import { upcaseTable } from './upcase.js';

/** The main boot region: boot sector, 8 extended boot sectors, OEM parameters, reserved, checksum. */
const BOOT_REGION_SECTORS = 12;
const FAT_OFFSET_BYTES = MiB;
const FIRST_CLUSTER = 2;
const MAX_CLUSTERS = 0xfffffff5;
const END_OF_CHAIN = 0xffffffff;

function clusterBytesFor(bytes: number): number {
  return bytes > 512 * GiB ? 256 * KiB : 128 * KiB;
}

/** exFAT's rotate-right-and-add checksum; the boot region's skips VolumeFlags and PercentInUse. */
function checksum(bytes: Uint8Array, start: number, skip: (i: number) => boolean = () => false): number {
  let sum = start;
  for (let i = 0; i < bytes.length; i++) {
    if (skip(i)) continue;
    sum = ((sum & 1 ? 0x80000000 : 0) + (sum >>> 1) + (bytes[i] ?? 0)) >>> 0;
  }
  return sum;
}

interface Geometry {
  sectorBytes: number;
  volumeSectors: number;
  fatOffset: number;
  fatSectors: number;
  heapOffset: number;
  clusters: number;
  clusterBytes: number;
}

function geometry(request: VolumeRequest): Geometry {
  const { sectorBytes } = request;
  const clusterBytes = clusterBytesFor(request.bytes);
  const perCluster = clusterBytes / sectorBytes;
  const volumeSectors = request.bytes / sectorBytes;
  const fatOffset = FAT_OFFSET_BYTES / sectorBytes;
  const fatSectors = Math.ceil(((Math.floor(volumeSectors / perCluster) + 2) * 4) / sectorBytes);
  const heapOffset = alignUp(fatOffset + fatSectors, ERASE_ALIGN / sectorBytes);
  const clusters = Math.min(MAX_CLUSTERS, Math.floor((volumeSectors - heapOffset) / perCluster));
  if (clusters < 1) throw new Error('the drive is too small for exFAT');
  return { sectorBytes, volumeSectors, fatOffset, fatSectors, heapOffset, clusters, clusterBytes };
}

/** The 12 sectors of a boot region, its checksum sector included (it is written twice: main and backup). */
function bootRegion(request: VolumeRequest, g: Geometry, percentInUse: number): Uint8Array {
  const { sectorBytes } = g;
  const region = new Uint8Array(BOOT_REGION_SECTORS * sectorBytes);
  const view = new DataView(region.buffer);
  region.set([0xeb, 0x76, 0x90]);
  region.set(
    Uint8Array.from('EXFAT   ', (c) => c.charCodeAt(0)),
    3,
  );
  view.setBigUint64(64, BigInt(request.startSector), true);
  view.setBigUint64(72, BigInt(g.volumeSectors), true);
  view.setUint32(80, g.fatOffset, true);
  view.setUint32(84, g.fatSectors, true);
  view.setUint32(88, g.heapOffset, true);
  view.setUint32(92, g.clusters, true);
  view.setUint32(96, rootCluster(g), true);
  view.setUint32(100, request.serial >>> 0, true);
  view.setUint16(104, 0x0100, true); // revision 1.00
  region[108] = Math.log2(sectorBytes);
  region[109] = Math.log2(g.clusterBytes / sectorBytes);
  region[110] = 1; // one FAT
  region[111] = 0x80;
  region[112] = percentInUse;
  region.fill(0xf4, 120, 510); // boot code: halt
  region[510] = 0x55;
  region[511] = 0xaa;
  // The extended boot sectors are empty but signed.
  for (let s = 1; s <= 8; s++) view.setUint32(s * sectorBytes + sectorBytes - 4, 0xaa550000, true);
  const sum = checksum(region.subarray(0, 11 * sectorBytes), 0, (i) => i === 106 || i === 107 || i === 112);
  for (let at = 11 * sectorBytes; at < 12 * sectorBytes; at += 4) view.setUint32(at, sum, true);
  return region;
}

function bitmapBytes(g: Geometry): number {
  return Math.ceil(g.clusters / 8);
}

function clustersFor(bytes: number, g: Geometry): number {
  return Math.ceil(bytes / g.clusterBytes);
}

function rootCluster(g: Geometry): number {
  return FIRST_CLUSTER + clustersFor(bitmapBytes(g), g) + clustersFor(upcaseTable().length, g);
}

/** FAT entries chaining each of `runs` (first cluster, count) and ending it. */
function fatEntries(runs: readonly [number, number][]): Uint8Array {
  const last = Math.max(...runs.map(([first, count]) => first + count));
  const fat = new Uint8Array(last * 4);
  const view = new DataView(fat.buffer);
  view.setUint32(0, 0xfffffff8, true);
  view.setUint32(4, END_OF_CHAIN, true);
  for (const [first, count] of runs) {
    for (let c = first; c < first + count; c++)
      view.setUint32(c * 4, c === first + count - 1 ? END_OF_CHAIN : c + 1, true);
  }
  return fat;
}

/** The root directory's entries: the label (when there is one), the bitmap, the up-case table. */
function rootEntries(label: string | null, g: Geometry, upcase: Uint8Array): Uint8Array {
  const entries = new Uint8Array(3 * 32);
  const view = new DataView(entries.buffer);
  let at = 0;
  if (label !== null) {
    entries[0] = 0x83;
    entries[1] = label.length;
    for (let i = 0; i < label.length; i++) view.setUint16(2 + i * 2, label.charCodeAt(i), true);
    at += 32;
  }
  entries[at] = 0x81; // allocation bitmap
  view.setUint32(at + 20, FIRST_CLUSTER, true);
  view.setBigUint64(at + 24, BigInt(bitmapBytes(g)), true);
  at += 32;
  entries[at] = 0x82; // up-case table
  view.setUint32(at + 4, checksum(upcase, 0), true);
  view.setUint32(at + 20, FIRST_CLUSTER + clustersFor(bitmapBytes(g), g), true);
  view.setBigUint64(at + 24, BigInt(upcase.length), true);
  return entries.subarray(0, at + 32);
}

export function exfatVolume(request: VolumeRequest): VolumeLayout {
  const g = geometry(request);
  const label = exfatLabel(request.label);
  const upcase = upcaseTable();
  const bitmapClusters = clustersFor(bitmapBytes(g), g);
  const upcaseClusters = clustersFor(upcase.length, g);
  const used = bitmapClusters + upcaseClusters + 1;
  // The bitmap's first bits: the clusters the three structures take.
  const bitmap = new Uint8Array(Math.ceil(used / 8));
  for (let c = 0; c < used; c++) bitmap[c >> 3] = (bitmap[c >> 3] ?? 0) | (1 << (c & 7));
  const boot = bootRegion(request, g, Math.floor((used * 100) / g.clusters));
  const sector = g.sectorBytes;
  const heap = g.heapOffset * sector;
  const clusterAt = (c: number) => heap + (c - FIRST_CLUSTER) * g.clusterBytes;
  const patches: Patch[] = [
    { offset: 0, bytes: boot },
    { offset: BOOT_REGION_SECTORS * sector, bytes: boot },
    {
      offset: g.fatOffset * sector,
      bytes: fatEntries([
        [FIRST_CLUSTER, bitmapClusters],
        [FIRST_CLUSTER + bitmapClusters, upcaseClusters],
        [rootCluster(g), 1],
      ]),
    },
    { offset: clusterAt(FIRST_CLUSTER), bytes: bitmap },
    { offset: clusterAt(FIRST_CLUSTER + bitmapClusters), bytes: upcase },
    { offset: clusterAt(rootCluster(g)), bytes: rootEntries(label, g, upcase) },
  ];
  return { metadataBytes: clusterAt(rootCluster(g) + 1), patches, clusterBytes: g.clusterBytes, clusters: g.clusters };
}
