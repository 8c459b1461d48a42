/**
 * A backup the way Windows runs one (UAC passes no descriptor): the helper connects to the image
 * pipe the app serves and sends the drive's bytes out through it, and this side compresses them
 * in-process (node:zlib). Off Windows the same code serves Unix sockets (pipePaths), so here it
 * runs for real, with the real helper as root on a loop device: the one thing not exercised is
 * UAC itself, for which the launch spawns the helper directly (channel 'named-pipe', no stdin),
 * as the UAC launch does once the user said yes. The files are decoded with the system's own gzip
 * and zstd, not with the codec that wrote them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { pipeDir, pipePaths } from '../../../common/contracts/helper-transport.js';
import { directLaunch } from '../../../user/launcher/elevation/direct.js';
import { createPipeServers, newPipeName } from '../../../user/launcher/pipe-servers.js';
import type { Elevation } from '../../../user/launcher/elevation/types.js';
import { builtBackupDrive, builtStartHelper } from '../../support/built-modules.js';
import { describeDevices } from '../../support/device-suite.js';
import { assertOwnedLoop, createLoop, scratchDir } from '../../support/loop-device.js';
import { asTestUser } from '../../support/unprivileged.js';

/** UAC's transport without UAC: the helper gets no descriptor and connects to the app's pipes. */
const overNamedPipes: Elevation = { ...directLaunch, channel: 'named-pipe', passesStdin: false };

/** A 24 MiB drive, mostly empty as real cards are, with 2 MiB of random bytes at an odd offset. */
function drive() {
  const loop = createLoop({ size: 24 * MiB, fill: 'zero' });
  assertOwnedLoop(loop.path);
  const fd = openSync(loop.backing, 'r+');
  writeSync(fd, randomBytes(2 * MiB), 0, 2 * MiB, 3 * MiB + 17);
  closeSync(fd);
  return loop;
}

const pipesInTmp = () => readdirSync('/tmp').filter((name) => /^sluice-[0-9a-f]{32}/.test(name));

describeDevices('a backup through named pipes (Unix sockets here), compressed in this process', () => {
  it.each([
    ['gz', 'gzip', '.gz'],
    ['zstd', 'zstd', '.zst'],
    [null, null, ''],
  ] as const)(
    '%s: the helper sends the drive out through the image pipe; the file, verified, decodes with %s to the drive',
    async (compress, tool, suffix) => {
      const source = drive();
      const file = join(scratchDir(), `backup.img${suffix}`);
      const startHelper = await builtStartHelper();
      const backupDrive = await builtBackupDrive();
      const before = pipesInTmp();

      const result = await backupDrive({
        drive: source.path,
        file,
        driveSize: 24 * MiB,
        driveMedium: null,
        compress,
        trimToPartitions: false,
        allBlocks: false,
        verify: true,
        launch: (options) => startHelper({ ...options, elevation: overNamedPipes }),
      });

      expect(result).toMatchObject({ status: 'ok', target: file, verified: true, bytes: 24 * MiB });
      const bytes = tool === null ? readFileSync(file) : execFileSync(tool, ['-dc', file], { maxBuffer: 64 * MiB });
      expect(bytes.equals(readFileSync(source.backing))).toBe(true);
      // The sockets are gone with the job.
      expect(pipesInTmp()).toEqual(before);
    },
  );

  it('serves its sockets in a new 0700 directory: another user cannot connect first and speak for the helper', () => {
    const name = newPipeName();
    const servers = createPipeServers(name, true);
    try {
      const dir = statSync(pipeDir(name));
      expect({ mode: dir.mode & 0o777, uid: dir.uid }).toEqual({ mode: 0o700, uid: process.getuid?.() });
      const connect = `require('net').connect(${JSON.stringify(pipePaths(name, false).control)}).on('connect', () => process.exit(0)).on('error', (e) => { console.log(e.code); process.exit(3); })`;
      const other = spawnSync(asTestUser()[0] ?? '', [...asTestUser().slice(1), process.execPath, '-e', connect], {
        encoding: 'utf8',
      });
      expect({ status: other.status, said: other.stdout.trim() }).toEqual({ status: 3, said: 'EACCES' });
      // A directory of that name made first by anyone else: no server, nothing to connect to.
      expect(() => createPipeServers(name, true)).toThrow(/EEXIST/);
    } finally {
      servers.close();
    }
    expect(pipesInTmp()).not.toContain(name);
  });
});
