/**
 * The helper of an app packaged as an AppImage, started for real through pkexec by an unprivileged
 * user, in the private polkit of test/support/polkit.ts. The AppImage is a stand-in shaped like the
 * real one: a file owned by the user that, like the type-2 runtime, serves its AppDir afresh on
 * each run at a new /tmp/.mount_Sluice?????? readable only by whoever runs it, sets APPDIR and
 * APPIMAGE, and runs electron-builder's own AppRun script, which starts the "app binary" (Node
 * standing in for Electron in Node mode) with the arguments. Root's run can thus reach the helper
 * only through its own mount: the launch command line cannot name it.
 */
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { PACKAGED_HELPER_ENTRY } from '../../../user/launcher/helper-program.js';
import { assertTestTarget, collect, spawnCommand } from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import { createLoop, readBytes, scratchDir, writeRandomFile } from '../../support/loop-device.js';
import { spawnWithPolkit } from '../../support/polkit.js';
import { asTestUser, ensureTestUser, shareWithTestUser } from '../../support/unprivileged.js';

const DRIVER = resolve('out/test/support/helper-driver.js');
/** pkexec's action for a program no installed action names: an AppImage has none. */
const GENERIC_ACTION = 'org.freedesktop.policykit.exec';
const { generateAppRunScript } = createRequire(import.meta.url)(
  'app-builder-lib/out/targets/appimage/appImageUtil.js',
) as {
  generateAppRunScript(config: { ExecutableName: string; ProductName: string; ProductFilename: string }): string;
};

/** The AppDir electron-builder packs (the parts the helper needs), and an AppImage file serving it. */
function fakeAppImage(
  dir: string,
  owner: { uid: number; gid: number },
  options: { userNamespaces: boolean } = { userNamespaces: true },
): { file: string; mounts: string } {
  const appDir = join(dir, 'squashfs-root');
  mkdirSync(join(appDir, PACKAGED_HELPER_ENTRY, '../../..'), { recursive: true });
  // AppRun probes with `unshare -Ur true`, its own directory first on PATH: where that fails (a
  // chroot, a container, namespaces turned off) it adds --no-sandbox to the app binary's arguments.
  if (!options.userNamespaces) writeFileSync(join(appDir, 'unshare'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
  symlinkSync(resolve('out'), join(appDir, PACKAGED_HELPER_ENTRY, '../../..', 'out'));
  symlinkSync(process.execPath, join(appDir, 'sluice'));
  writeFileSync(
    join(appDir, 'AppRun'),
    generateAppRunScript({ ExecutableName: 'sluice', ProductName: 'Sluice', ProductFilename: 'Sluice' }),
    { mode: 0o755 },
  );
  const mounts = join(dir, 'mounts.log');
  const file = join(dir, 'Sluice-0.1.0-x86_64.AppImage');
  writeFileSync(
    file,
    `#!/bin/sh
# The runtime's part: a fresh mount point for this run, the AppDir served there, AppRun started.
set -eu
mount=$(mktemp -d /tmp/.mount_SluiceXXXXXX)
for entry in '${appDir}'/*; do ln -s "$entry" "$mount/"; done
echo "$(id -u) $mount" >> '${mounts}'
status=0
APPDIR="$mount" APPIMAGE="$0" "$mount/AppRun" "$@" || status=$?
rm -rf "$mount"
exit $status
`,
    { mode: 0o755 },
  );
  chownSync(file, owner.uid, owner.gid);
  chmodSync(dir, 0o755);
  return { file, mounts };
}

describeDevices('an AppImage, through pkexec', () => {
  let owner: { uid: number; gid: number };
  beforeAll(() => (owner = ensureTestUser()));

  it.each([
    ['', true],
    [', where AppRun finds no user namespaces (and adds --no-sandbox)', false],
  ])(
    'root runs the AppImage itself, which finds the helper in its own mount: it flashes and verifies%s',
    async (_where, userNamespaces) => {
      const dir = scratchDir();
      const { file, mounts } = fakeAppImage(dir, owner, { userNamespaces });
      const image = join(dir, 'image.img');
      writeRandomFile(image, 5 * MiB + 11);
      shareWithTestUser(image);
      const loop = createLoop({ size: 8 * MiB, dir });
      assertTestTarget(loop.path);

      const spec = { imageThroughFifo: false, appImage: file, image, imageSize: 5 * MiB + 11, targets: [loop.path] };
      const run = await collect(
        spawnWithPolkit([...asTestUser(), process.execPath, DRIVER, JSON.stringify(spec)], {
          helperProgram: '/nonexistent/sluice-helper',
          answer: 'YES',
          action: GENERIC_ACTION,
        }),
      );

      expect(
        run.events.find((e) => e.type === 'result'),
        run.stderr,
      ).toMatchObject({ status: 'ok', target: loop.path, bytes: 5 * MiB + 11, verified: true });
      expect(readBytes(loop.backing, 0, 5 * MiB + 11).equals(readFileSync(image))).toBe(true);
      // Served once, to root, at a mount point of its own that is gone again.
      const served = readFileSync(mounts, 'utf8').trim().split('\n');
      expect(served).toHaveLength(1);
      const [servedTo, mountPoint = ''] = served[0]!.split(' ');
      expect(servedTo).toBe('0');
      expect(mountPoint).toMatch(/^\/tmp\/\.mount_Sluice\w{6}$/);
      expect(existsSync(mountPoint)).toBe(false);
    },
  );

  it('a group-writable AppImage is refused before anything is asked or run', async () => {
    const dir = scratchDir();
    const { file, mounts } = fakeAppImage(dir, owner);
    chmodSync(file, 0o775);
    const loop = createLoop({ size: 4 * MiB, dir });
    const image = join(dir, 'image.img');
    writeRandomFile(image, MiB);
    shareWithTestUser(image);
    const spec = { imageThroughFifo: false, appImage: file, image, imageSize: MiB, targets: [loop.path] };
    const run = await collect(spawnCommand([...asTestUser(), process.execPath, DRIVER, JSON.stringify(spec)]));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(
      `The AppImage ${file} can be changed by other users (mode 775), so Sluice will not run it as administrator.`,
    );
    expect(existsSync(mounts)).toBe(false);
  });
});
