/**
 * A drive as the app's drive source reports it, before any verdict about the chosen image.
 * This is the interim model until the drives scanner (worker/drives, issue 4) provides its own
 * Drive type; drive-source.ts is the one place that produces it.
 */
export interface ScannedDrive {
  device: string;
  /** Human name; empty when the OS gives none. */
  description: string;
  size: number | null;
  /** "USB", "SD", "SATA", "NVME", "loop"...; null when unknown. */
  bus: string | null;
  removable: boolean;
  virtual: boolean;
  readOnly: boolean;
  /** The OS lists it as an internal or system disk. */
  system: boolean;
  /** Where the drive's partitions are mounted. */
  mountpoints: string[];
}
