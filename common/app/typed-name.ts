/**
 * The name a person types to confirm an internal disk of this computer: the last part of its path
 * ("sda", "disk2", "PhysicalDrive1"). The page asks for it; the app's core compares what was
 * typed with it, for the drive it listed itself (electron/core/drive-confirmations.ts).
 */
export function typedName(device: string): string {
  return device.split(/[\\/]/).pop() ?? device;
}
