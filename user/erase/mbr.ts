/** A classic MBR with one primary partition: every OS and every camera reads it. */
export interface MbrRequest {
  sectorBytes: number;
  startSector: number;
  sectors: number;
  /** 0x0c: FAT32 with LBA; 0x07: exFAT (and NTFS). */
  type: number;
  diskSignature: number;
}

/** An MBR addresses at most 2^32 sectors: 2 TiB with 512-byte sectors, the largest SDXC card. */
export const MAX_SECTORS = 0xffffffff;

export function mbr(request: MbrRequest): Uint8Array {
  if (request.startSector + request.sectors > MAX_SECTORS) {
    throw new Error(
      `the drive is larger than an MBR partition table can describe (${MAX_SECTORS} sectors of ${request.sectorBytes} bytes)`,
    );
  }
  const sector = new Uint8Array(request.sectorBytes);
  const view = new DataView(sector.buffer);
  view.setUint32(440, request.diskSignature >>> 0, true);
  const entry = 446;
  sector[entry] = 0x00; // not active: nothing boots from an erased card
  // CHS fields say "use the LBA ones" (1023/254/63), as every tool since the 2000s writes them.
  sector.set([0xfe, 0xff, 0xff], entry + 1);
  sector[entry + 4] = request.type;
  sector.set([0xfe, 0xff, 0xff], entry + 5);
  view.setUint32(entry + 8, request.startSector, true);
  view.setUint32(entry + 12, request.sectors, true);
  sector[510] = 0x55;
  sector[511] = 0xaa;
  return sector;
}
