import drivelist from 'drivelist';

export type SystemDrive = drivelist.Drive;

/** The drives the OS lists (drivelist: lsblk on Linux, DiskArbitration on macOS, SetupAPI on Windows). */
export async function listSystemDrives(): Promise<SystemDrive[]> {
  return drivelist.list();
}

/** A drive's human name, "SanDisk Ultra", or a fallback for drives that carry none (loop devices). */
export function driveLabel(drive: SystemDrive | undefined): string {
  const description = drive?.description.trim();
  return description ? description : 'unnamed drive';
}
