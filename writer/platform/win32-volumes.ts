/**
 * Windows: which volumes lie on a disk. A volume is found by where its bytes are, never by the
 * disk's partition table: a "superfloppy" stick (a filesystem from sector 0, no partition table)
 * has a mounted volume that Get-Partition does not list. As Rufus does (src/drive.c,
 * GetLogicalName), every volume the system has (FindFirstVolumeW / FindNextVolumeW) is asked for
 * its extents (IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS); a volume with any extent on the disk is on
 * it, whether or not it also spans other disks. PowerShell only reports what Windows says (the
 * raw extents, base64); the decision is made here, where it is tested.
 */

/** CTL_CODE(IOCTL_VOLUME_BASE 'V', 0, METHOD_BUFFERED, FILE_ANY_ACCESS): a handle without access rights may ask. */
const IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS = 0x00560000;
/**
 * winioctl.h: VOLUME_DISK_EXTENTS is a DWORD count, then DISK_EXTENT entries aligned to 8 bytes:
 * DWORD DiskNumber (+4 bytes of padding), LARGE_INTEGER StartingOffset, LARGE_INTEGER ExtentLength.
 */
const EXTENTS_HEADER = 8;
const EXTENT_SIZE = 24;
/** Room for 32 extents; a volume with more (a dynamic volume over many disks) is asked again with room for the count it gave. */
const EXTENTS_BUFFER = EXTENTS_HEADER + 32 * EXTENT_SIZE;
/** winerror.h: the buffer holds the first extents and their count only. */
const ERROR_MORE_DATA = 234;

/**
 * C# for Add-Type (-UsingNamespace System.Text): the calls the volume scripts make. The lock
 * script adds FSCTL_LOCK_VOLUME / FSCTL_DISMOUNT_VOLUME through DeviceIoControl.
 */
export const P_INVOKE_VOLUMES = `Add-Type -Namespace Sluice -Name Volume -UsingNamespace System.Text -MemberDefinition @'
[DllImport("kernel32.dll", CharSet = CharSet.Unicode, SetLastError = true)]
public static extern Microsoft.Win32.SafeHandles.SafeFileHandle CreateFileW(string name, uint access, uint share, IntPtr security, uint disposition, uint flags, IntPtr template);
[DllImport("kernel32.dll", SetLastError = true)]
public static extern bool DeviceIoControl(Microsoft.Win32.SafeHandles.SafeFileHandle device, uint code, IntPtr input, uint inputSize, IntPtr output, uint outputSize, out uint returned, IntPtr overlapped);
[DllImport("kernel32.dll", EntryPoint = "DeviceIoControl", SetLastError = true)]
public static extern bool DeviceIoControlOut(Microsoft.Win32.SafeHandles.SafeFileHandle device, uint code, IntPtr input, uint inputSize, byte[] output, uint outputSize, out uint returned, IntPtr overlapped);
[DllImport("kernel32.dll", CharSet = CharSet.Unicode, SetLastError = true)]
public static extern IntPtr FindFirstVolumeW(StringBuilder name, int length);
[DllImport("kernel32.dll", CharSet = CharSet.Unicode, SetLastError = true)]
public static extern bool FindNextVolumeW(IntPtr find, StringBuilder name, int length);
[DllImport("kernel32.dll")]
public static extern bool FindVolumeClose(IntPtr find);
[DllImport("kernel32.dll", CharSet = CharSet.Unicode, SetLastError = true)]
public static extern bool GetVolumePathNamesForVolumeNameW(string volume, char[] names, int length, out int needed);
'@`;

/**
 * A PowerShell function, Get-SluiceVolumes: one object per volume of the system, { Volume:
 * "\\\\?\\Volume{GUID}\\", Extents: base64 of VOLUME_DISK_EXTENTS ("" when the volume has none to
 * tell, a CD drive without a disc), Paths: its drive letters and mounted folders }. The volume is
 * opened with no access rights (0), which the extents query needs and which disturbs nobody.
 */
export const GET_VOLUMES = `function Get-SluiceVolumes {
  $name = New-Object System.Text.StringBuilder 64
  $find = [Sluice.Volume]::FindFirstVolumeW($name, 64)
  if ($find.ToInt64() -eq -1) { return }
  try {
    do {
      $volume = $name.ToString()
      $extents = ''
      $h = [Sluice.Volume]::CreateFileW($volume.TrimEnd('\\'), 0, 3, [IntPtr]::Zero, 3, 0, [IntPtr]::Zero)
      if (-not $h.IsInvalid) {
        $buffer = New-Object byte[] ${EXTENTS_BUFFER}
        $n = 0
        $ok = [Sluice.Volume]::DeviceIoControlOut($h, ${IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS}, [IntPtr]::Zero, 0, $buffer, ${EXTENTS_BUFFER}, [ref]$n, [IntPtr]::Zero)
        if (-not $ok -and [Runtime.InteropServices.Marshal]::GetLastWin32Error() -eq ${ERROR_MORE_DATA}) {
          $size = ${EXTENTS_HEADER} + [BitConverter]::ToUInt32($buffer, 0) * ${EXTENT_SIZE}
          $buffer = New-Object byte[] $size
          $ok = [Sluice.Volume]::DeviceIoControlOut($h, ${IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS}, [IntPtr]::Zero, 0, $buffer, $size, [ref]$n, [IntPtr]::Zero)
        }
        if ($ok) { $extents = [Convert]::ToBase64String($buffer, 0, $n) }
        $h.Dispose()
      }
      $chars = New-Object char[] 4096
      $used = 0
      $paths = @()
      if ([Sluice.Volume]::GetVolumePathNamesForVolumeNameW($volume, $chars, 4096, [ref]$used)) { $paths = @([string]::new($chars, 0, $used).Split([char]0) | Where-Object { $_ }) }
      [pscustomobject]@{ Volume = $volume; Extents = $extents; Paths = $paths }
    } while ([Sluice.Volume]::FindNextVolumeW($find, $name, 64))
  } finally {
    [void][Sluice.Volume]::FindVolumeClose($find)
  }
}`;

/** What Get-SluiceVolumes printed for one volume, as ConvertTo-Json spells it (one path may come as a string). */
export interface ReportedVolume {
  Volume: string;
  Extents: string;
  Paths: string[] | string | null;
}

export interface DiskExtent {
  disk: number;
  start: number;
  length: number;
}

/** VOLUME_DISK_EXTENTS, bounded by the bytes there are, whatever the count says. */
export function parseVolumeDiskExtents(bytes: Uint8Array): DiskExtent[] {
  if (bytes.length < 4) return [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint32(0, true);
  const extents: DiskExtent[] = [];
  for (let i = 0; i < count; i++) {
    const at = EXTENTS_HEADER + i * EXTENT_SIZE;
    if (at + EXTENT_SIZE > bytes.length) break;
    extents.push({
      disk: view.getUint32(at, true),
      start: Number(view.getBigInt64(at + 8, true)),
      length: Number(view.getBigInt64(at + 16, true)),
    });
  }
  return extents;
}

export interface DiskVolume {
  /** \\?\Volume{GUID}\ */
  volume: string;
  /** Drive letters and mounted folders ("E:\"); empty when it has none. */
  paths: string[];
}

/** The volumes with an extent on disk `disk`. */
export function volumesOnDisk(reported: readonly ReportedVolume[], disk: number): DiskVolume[] {
  return reported
    .filter((v) => parseVolumeDiskExtents(Buffer.from(v.Extents, 'base64')).some((extent) => extent.disk === disk))
    .map((v) => ({ volume: v.Volume, paths: v.Paths === null ? [] : Array.isArray(v.Paths) ? v.Paths : [v.Paths] }));
}

/** How a volume is named to the user: its first drive letter or folder, else its GUID path. */
export function volumeName(volume: DiskVolume): string {
  return volume.paths[0] ?? volume.volume;
}

/** Windows PowerShell 5.1 may spell an array as { value: [...], Count: N } (its extended type data for arrays). */
function unwrapped(value: unknown): unknown {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && 'value' in value
    ? (value as { value: unknown }).value
    : value;
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/**
 * What ConvertTo-Json made of Get-SluiceVolumes' output: an array, a single object, or nothing.
 * Anything else is refused: a volume this cannot read could be one on the disk, left unlocked.
 */
export function reportedVolumes(json: unknown): ReportedVolume[] {
  const list = unwrapped(json);
  if (list === null || list === undefined || list === '') return [];
  return (Array.isArray(list) ? list : [list]).map((item: unknown): ReportedVolume => {
    const v = item as Partial<Record<keyof ReportedVolume, unknown>> | null;
    const paths = unwrapped(v?.Paths);
    if (
      v === null ||
      typeof v !== 'object' ||
      typeof v.Volume !== 'string' ||
      typeof v.Extents !== 'string' ||
      !(paths === null || paths === undefined || typeof paths === 'string' || isStringList(paths))
    ) {
      throw new Error(`unexpected volume in the volume list: ${JSON.stringify(item)?.slice(0, 200)}`);
    }
    return { Volume: v.Volume, Extents: v.Extents, Paths: paths ?? null };
  });
}
