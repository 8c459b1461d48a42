/**
 * Windows: a "superfloppy", a disk whose filesystem starts at sector 0 with no partition table, as
 * many sticks come. Its volume is mounted with a drive letter, yet Get-Partition lists nothing, so
 * Sluice once wrote under a mounted volume. The helper now locks and dismounts every volume with
 * an extent on the disk (writer/platform/win32-volumes.ts); here a VHD is made into a superfloppy
 * and flashed through the CLI, and the write must succeed, verify, and be on the disk.
 *
 * How the VHD becomes one (Windows cannot format a disk without a partition): a FAT volume is
 * made on an MBR partition, the disk is taken offline, the volume's bytes are copied to sector 0
 * over the partition table, and the disk is brought online again, where Windows finds a
 * filesystem at sector 0. The test first checks that this gave what it needs (a mounted volume
 * with a drive letter and an extent on the disk) and fails saying so if not: it never passes
 * without having flashed a superfloppy. Written for GitHub's Windows runner; it has not run there yet.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { powershellArgs } from '../../writer/platform/win32-disk.js';
import { GET_VOLUMES, P_INVOKE_VOLUMES, reportedVolumes, volumesOnDisk } from '../../writer/platform/win32-volumes.js';
import { collect, resultsOf, spawnCli } from '../support/cli.js';
import { assertTestDisk, createTestDisk, describeDisks, readTestDisk } from '../support/test-disk.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-superfloppy-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function powershell(script: string): string {
  return execFileSync('powershell.exe', powershellArgs(`$ErrorActionPreference = 'Stop'\n${script}`), {
    encoding: 'utf8',
  });
}

/** Turns disk `n` (empty, attached) into a superfloppy holding a FAT volume with a drive letter. */
function makeSuperfloppy(n: number): void {
  powershell(`
Initialize-Disk -Number ${n} -PartitionStyle MBR
$p = New-Partition -DiskNumber ${n} -UseMaximumSize -AssignDriveLetter
Format-Volume -Partition $p -FileSystem FAT -Force | Out-Null
$offset = $p.Offset
$length = $p.Size
Set-Disk -Number ${n} -IsOffline $true
$disk = New-Object IO.FileStream ('\\\\.\\PhysicalDrive${n}', [IO.FileMode]::Open, [IO.FileAccess]::ReadWrite, [IO.FileShare]::ReadWrite)
$buffer = New-Object byte[] (1MB)
for ($at = 0; $at -lt $length; $at += $buffer.Length) {
  [void]$disk.Seek($offset + $at, [IO.SeekOrigin]::Begin)
  $got = $disk.Read($buffer, 0, $buffer.Length)
  [void]$disk.Seek($at, [IO.SeekOrigin]::Begin)
  $disk.Write($buffer, 0, $got)
}
$disk.Flush()
$disk.Close()
Set-Disk -Number ${n} -IsOffline $false
Update-Disk -Number ${n}
Start-Sleep -Seconds 3
`);
}

describeDisks('a superfloppy (no partition table, a mounted volume)', () => {
  it('is written under its locked, dismounted volume, verified, and the disk holds the image', async () => {
    const disk = createTestDisk(64 * MiB);
    assertTestDisk(disk.path);
    const n = Number(/(\d+)$/.exec(disk.path)?.[1]);
    makeSuperfloppy(n);
    const volumes = volumesOnDisk(
      reportedVolumes(
        JSON.parse(
          powershell(
            `${P_INVOKE_VOLUMES}\n${GET_VOLUMES}\nConvertTo-Json -InputObject @(Get-SluiceVolumes) -Compress -Depth 3`,
          ),
        ),
      ),
      n,
    );
    const partitions = powershell(`@(Get-Partition -DiskNumber ${n} -ErrorAction SilentlyContinue).Count`).trim();
    console.log(`superfloppy on disk ${n}: volumes ${JSON.stringify(volumes)}, Get-Partition lists ${partitions}`);
    expect(
      volumes.some((v) => v.paths.length > 0),
      'the VHD did not become a superfloppy with a mounted volume: this runner cannot make the case',
    ).toBe(true);

    const bytes = randomBytes(5 * MiB + 77);
    const image = join(dir, 'image.img');
    writeFileSync(image, bytes);
    const run = await collect(spawnCli(['flash', '--yes', '--json', '--no-eject', image, disk.path]));

    expect(run.code, run.stderr).toBe(0);
    expect(resultsOf(run).get(disk.path)).toMatchObject({ status: 'ok', verified: true, bytes: bytes.length });
    expect(readTestDisk(disk, bytes.length).equals(bytes)).toBe(true);
  });
});
