/**
 * Windows: what happens to a disk around a write. Since Vista, Windows refuses raw writes into a
 * mounted volume's sectors unless the volume is locked or dismounted, and a dismounted volume
 * mounts itself again at the next access (Explorer, an antivirus). So every volume on the disk is
 * locked (FSCTL_LOCK_VOLUME, which also fails while any program has a file open there) and
 * dismounted, and the locks are held until the job is done with the disk. Node cannot issue
 * DeviceIoControl, so a PowerShell process does it and holds the locks: it lives until its
 * standard input closes, which the helper does when it is done, or which happens when it dies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { jobError } from '../../common/domain/failure.js';
import { NOTHING_HELD, type DeviceFacts, type VolumeHold } from './types.js';
import { physicalDriveNumber, powershellArgs, runPowerShell } from './win32-disk.js';
import { errorText } from '../../common/domain/error-details.js';
import {
  GET_VOLUMES,
  P_INVOKE_VOLUMES,
  reportedVolumes,
  volumeName,
  volumesOnDisk,
  type DiskVolume,
} from './win32-volumes.js';

/** winnt.h; interpolated as decimal, since PowerShell reads 0xC0000000 as a negative Int32. */
const GENERIC_READ_WRITE = 0xc0000000;
/** FILE_SHARE_READ | FILE_SHARE_WRITE: others may keep their handles, or the open itself would fail while the lock is what should. */
const SHARE_READ_WRITE = 3;
const OPEN_EXISTING = 3;
/** winioctl.h */
const FSCTL_LOCK_VOLUME = 0x00090018;
const FSCTL_DISMOUNT_VOLUME = 0x00090020;
/**
 * A lock is retried this many times, 100 ms apart: Explorer and antivirus scanners open a new
 * volume's files for a moment, and a lock taken a second later succeeds.
 */
const LOCK_ATTEMPTS = 20;
/** PowerShell takes a second or two to start; a lock script that says nothing for this long is stuck. */
const LOCK_TIMEOUT_MS = 60_000;

/**
 * The lock script, in two steps within one process (the one that then holds the locks):
 * 1. prints every volume of the system with its extents (Get-SluiceVolumes), one JSON line;
 * 2. reads back the volumes on the disk (chosen here, volumesOnDisk), one "VOLUME<tab>NAME" line
 *    each and an empty line after them, locks and dismounts each, prints {"Held":N} or
 *    {"Busy":"E:\\","Error":"..."}, and holds the locks until its standard input closes.
 *    Lines, not JSON: Windows PowerShell 5.1's ConvertFrom-Json hands an array on as one object
 *    (PowerShell issue #3424), so a loop over it would see one item, the whole array.
 * Volumes are found by their extents, so a superfloppy's volume, which no partition lists, is
 * locked too. Since Vista a write through a disk handle into a mounted volume's sectors fails
 * unless that volume is locked or dismounted (WriteFile, "Disk and volume writes"); the lock
 * also keeps anything from mounting it again, for as long as this process holds the handle.
 */
export function volumeLockScript(): string {
  return `$ErrorActionPreference = 'Stop'
${P_INVOKE_VOLUMES}
${GET_VOLUMES}
ConvertTo-Json -InputObject @(Get-SluiceVolumes) -Compress -Depth 3
[Console]::Out.Flush()
$chosen = New-Object System.Collections.ArrayList
while ($true) {
  $line = [Console]::In.ReadLine()
  if ($null -eq $line -or $line -eq '') { break }
  $parts = $line.Split([char]9, 2)
  [void]$chosen.Add([pscustomobject]@{ Volume = $parts[0]; Name = $parts[1] })
}
$held = New-Object System.Collections.ArrayList
foreach ($v in $chosen) {
  $h = [Sluice.Volume]::CreateFileW($v.Volume.TrimEnd('\\'), ${GENERIC_READ_WRITE}, ${SHARE_READ_WRITE}, [IntPtr]::Zero, ${OPEN_EXISTING}, 0, [IntPtr]::Zero)
  if ($h.IsInvalid) {
    [pscustomobject]@{ Busy = $v.Name; Error = (New-Object ComponentModel.Win32Exception ([Runtime.InteropServices.Marshal]::GetLastWin32Error())).Message } | ConvertTo-Json -Compress
    exit 1
  }
  $n = 0
  $locked = $false
  for ($i = 0; $i -lt ${LOCK_ATTEMPTS} -and -not $locked; $i++) {
    $locked = [Sluice.Volume]::DeviceIoControl($h, ${FSCTL_LOCK_VOLUME}, [IntPtr]::Zero, 0, [IntPtr]::Zero, 0, [ref]$n, [IntPtr]::Zero)
    if (-not $locked) { Start-Sleep -Milliseconds 100 }
  }
  if (-not $locked) {
    [pscustomobject]@{ Busy = $v.Name; Error = 'a program has files open on it' } | ConvertTo-Json -Compress
    exit 1
  }
  [void][Sluice.Volume]::DeviceIoControl($h, ${FSCTL_DISMOUNT_VOLUME}, [IntPtr]::Zero, 0, [IntPtr]::Zero, 0, [ref]$n, [IntPtr]::Zero)
  [void]$held.Add($h)
}
[pscustomobject]@{ Held = $held.Count } | ConvertTo-Json -Compress
[Console]::Out.Flush()
if ($held.Count -gt 0) { [void][Console]::In.ReadToEnd() }
`;
}

/**
 * The lines the lock script reads: each volume to lock with the name to report it by, then an
 * empty line. Neither holds a tab or a line break (a volume GUID path; a drive letter or folder,
 * whose names Windows forbids control characters in).
 */
export function lockRequest(volumes: readonly DiskVolume[]): string {
  return `${volumes.map((v) => `${v.volume}\t${volumeName(v)}\n`).join('')}\n`;
}

export type LockReport = { held: number } | { busy: string; error: string };

/** The lock script's last line. */
export function parseLockReport(line: string): LockReport {
  const report = JSON.parse(line) as { Held?: number; Busy?: string; Error?: string };
  if (typeof report.Held === 'number') return { held: report.Held };
  if (typeof report.Busy === 'string') return { busy: report.Busy, error: report.Error ?? '' };
  throw new Error(`unexpected output from the volume lock script: ${line}`);
}

/** The lines `child` prints, one at a time, each awaited with a timeout; rejects saying how it ended without one. */
function lineReader(child: ChildProcess, timeoutMs: number): () => Promise<string> {
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const lines: string[] = [];
  let waiting: ((line: string | Error) => void) | null = null;
  let ended: Error | null = null;
  const deliver = (item: string | Error): void => {
    const wake = waiting;
    waiting = null;
    if (wake !== null) wake(item);
    else if (typeof item === 'string') lines.push(item);
  };
  createInterface({ input: child.stdout ?? process.stdin }).on('line', (line) => deliver(line));
  const end = (error: Error): void => {
    ended ??= error;
    deliver(error);
  };
  child.once('error', end);
  child.once('exit', (code) =>
    end(new Error(`PowerShell exited (code ${code ?? 'none'}) before locking the volumes: ${stderr.trim()}`)),
  );
  return () => {
    const next = lines.shift();
    if (next !== undefined) return Promise.resolve(next);
    if (ended !== null) return Promise.reject(ended);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting = null;
        reject(new Error(`PowerShell said nothing for ${timeoutMs / 1000} s`));
      }, timeoutMs);
      waiting = (item) => {
        clearTimeout(timer);
        if (typeof item === 'string') resolve(item);
        else reject(item);
      };
    });
  };
}

function endHold(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.stdin?.end();
  });
}

export async function unmountWin32(facts: DeviceFacts): Promise<VolumeHold> {
  const disk = physicalDriveNumber(facts.path);
  if (disk === null) return NOTHING_HELD;
  const child = spawn('powershell.exe', powershellArgs(volumeLockScript()), {
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
  });
  // A script that has exited already makes a write to it fail with EPIPE: its exit is what nextLine reports.
  child.stdin?.on('error', () => undefined);
  const nextLine = lineReader(child, LOCK_TIMEOUT_MS);
  let report: LockReport;
  try {
    const volumes = volumesOnDisk(reportedVolumes(JSON.parse(await nextLine())), disk);
    child.stdin?.write(lockRequest(volumes));
    report = parseLockReport(await nextLine());
  } catch (error) {
    child.kill();
    throw jobError(
      'target-busy',
      `Could not lock the volumes on ${facts.path}: ${errorText(error)}. Nothing was written.`,
    );
  }
  if ('busy' in report) {
    await endHold(child);
    throw jobError(
      'target-busy',
      `${report.busy} (on ${facts.path}) is in use: ${report.error}. Close the programs and windows using it, then try again. Nothing was written.`,
    );
  }
  return { release: () => endHold(child) };
}

/** Asks Windows to read the disk's partition table again, so the new volumes appear. */
export async function rereadPartitionsWin32(facts: DeviceFacts): Promise<void> {
  const disk = physicalDriveNumber(facts.path);
  if (disk !== null) await runPowerShell(`Update-Disk -Number ${disk}`);
}

/**
 * Requests the eject the way "Safely Remove Hardware" does (CM_Request_Device_Eject). A USB
 * stick or reader is ejected through its USB device node, which powers it off; anything else
 * (an SD slot on the board) through the disk's own node, never its controller's.
 */
export function ejectScript(disk: number): string {
  return `$ErrorActionPreference = 'Stop'
Add-Type -Namespace Sluice -Name Cfg -MemberDefinition @'
[DllImport("cfgmgr32.dll", CharSet = CharSet.Unicode)]
public static extern int CM_Locate_DevNodeW(out uint devInst, string deviceId, uint flags);
[DllImport("cfgmgr32.dll")]
public static extern int CM_Get_Parent(out uint parent, uint devInst, uint flags);
[DllImport("cfgmgr32.dll", CharSet = CharSet.Unicode)]
public static extern int CM_Get_Device_IDW(uint devInst, System.Text.StringBuilder buffer, int length, uint flags);
[DllImport("cfgmgr32.dll", CharSet = CharSet.Unicode)]
public static extern int CM_Request_Device_EjectW(uint devInst, out int vetoType, System.Text.StringBuilder vetoName, int length, uint flags);
'@
$id = (Get-CimInstance -ClassName Win32_DiskDrive -Filter "Index = ${disk}").PNPDeviceID
$node = 0
$located = [Sluice.Cfg]::CM_Locate_DevNodeW([ref]$node, $id, 0)
if ($located -ne 0) { [pscustomobject]@{ Result = $located; Veto = 0; VetoName = '' } | ConvertTo-Json -Compress; exit 0 }
$parent = 0
$parentId = New-Object System.Text.StringBuilder 512
if ([Sluice.Cfg]::CM_Get_Parent([ref]$parent, $node, 0) -eq 0 -and [Sluice.Cfg]::CM_Get_Device_IDW($parent, $parentId, 512, 0) -eq 0 -and $parentId.ToString().StartsWith('USB\\')) { $node = $parent }
$veto = 0
$vetoName = New-Object System.Text.StringBuilder 512
$result = [Sluice.Cfg]::CM_Request_Device_EjectW($node, [ref]$veto, $vetoName, 512, 0)
[pscustomobject]@{ Result = $result; Veto = $veto; VetoName = $vetoName.ToString() } | ConvertTo-Json -Compress
`;
}

/** PNP_VETO_TYPE (cfg.h): why Windows refused to eject. */
const VETO_REASONS: Record<number, string> = {
  1: 'a legacy device is in the way',
  2: 'a removal is already pending',
  3: 'an application is using it',
  4: 'a service is using it',
  5: 'a program has it open',
  6: 'another device depends on it',
  7: 'its driver refused',
  8: 'the request was not valid for this device',
  9: 'it is needed for power',
  10: 'it cannot be disabled',
  11: 'a legacy driver refused',
  12: 'Windows needs more rights to eject it',
  13: 'it was already removed',
};

/** CONFIGRET success. */
const CR_SUCCESS = 0;

/** What the eject script printed, as null (ejected) or the reason it was not. */
export function ejectRefusal(output: string): string | null {
  const report = JSON.parse(output) as { Result: number; Veto: number; VetoName: string };
  if (report.Result === CR_SUCCESS && report.Veto === 0) return null;
  const reason = VETO_REASONS[report.Veto] ?? `configuration manager error ${report.Result}`;
  return report.VetoName === '' ? reason : `${reason} (${report.VetoName})`;
}

export async function ejectWin32(facts: DeviceFacts): Promise<boolean> {
  const disk = physicalDriveNumber(facts.path);
  if (disk === null) return false;
  const refusal = ejectRefusal((await runPowerShell(ejectScript(disk))).trim());
  if (refusal !== null) throw new Error(`Windows would not eject it: ${refusal}`);
  return true;
}
