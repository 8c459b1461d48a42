/**
 * `sudo sluice …` run by an ordinary user through a real sudo: root keeps only the broker and the
 * helper (cli/broker.ts), and every path the user names is opened with the user's rights. The
 * test user may run exactly the built CLI as root, without a password (a sudoers rule made here).
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { EXIT } from '../../cli/exit-codes.js';
import { IMAGE_SIZE, serveCatalogue, type CatalogueServer } from '../support/catalogue.js';
import { assertTestTarget, collect, type CliRun } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { efiInstallerIso } from '../support/installer-fixtures.js';
import { createLoop, digestFile, scratchDir, writeRandomFile, type LoopDevice } from '../support/loop-device.js';
import { watchDescendants, type SeenProcess } from '../support/processes.js';
import { allowSudo, asTestUser, builtCli, ensureTestUser } from '../support/unprivileged.js';

const isSluice = (argv: string[]) => argv.some((a) => /out\/run\/[a-z-]+\.js$/.test(a));
const isHelperProcess = (argv: string[]) => argv.some((a) => a.endsWith('out/run/helper.js'));

describeDevices('sudo sluice, started by an ordinary user: only the writer is root', () => {
  let user: { uid: number; gid: number };
  let removeRule: () => void;
  /** A folder the user may use, and one only root may. */
  let open: string;
  let rootOnly: string;
  /** A folder everyone may enter and only root may write, as /etc/cron.d. */
  let rootWrites: string;
  let image: string;
  /** The image with 12 MiB of zeros after it, and that xz-compressed. */
  let decompressed: string;
  let compressed: string;
  /** An image cache of the user's. */
  let cache: string;

  /**
   * Runs `sudo -n -u root sluice args…` as the test user, watching which process runs as whom:
   * the processes of Sluice's own bundles, or every one `watch` matches.
   */
  async function sudoSluice(
    args: string[],
    env: Record<string, string> = {},
    watch: (argv: string[]) => boolean = isSluice,
  ): Promise<{ run: CliRun; seen: SeenProcess[]; byPid: Map<number, SeenProcess> }> {
    const child = spawn(
      asTestUser()[0] ?? '',
      [...asTestUser().slice(1), 'sudo', '-n', '-u', 'root', ...builtCli(), ...args],
      { stdio: ['ignore', 'pipe', 'pipe'], cwd: '/', env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env } },
    );
    const watching = watchDescendants(child.pid ?? -1, watch);
    const run = await collect(child);
    const byPid = watching.stop();
    return { run, seen: [...byPid.values()], byPid };
  }

  /** Whether `pid` is the helper or was started by it (the tools it runs on its drives). */
  function helperOrItsChild(pid: number, byPid: Map<number, SeenProcess>): boolean {
    for (let p = byPid.get(pid), hops = 0; p !== undefined && hops < 8; hops += 1) {
      if (isHelperProcess(p.argv)) return true;
      pid = p.parent;
      p = byPid.get(pid);
    }
    return false;
  }

  /** The start of `loop` holds `file`'s bytes. */
  function holds(loop: LoopDevice, file: string): boolean {
    const expected = readFileSync(file);
    return readFileSync(loop.backing).subarray(0, expected.length).equals(expected);
  }

  function loopFor(size: number): LoopDevice {
    const loop = createLoop({ size, dir: scratchDir() });
    assertTestTarget(loop.path);
    return loop;
  }

  beforeAll(() => {
    user = ensureTestUser();
    removeRule = allowSudo(builtCli(), ['SLUICE_CACHE_DIR']);
    open = scratchDir();
    chmodSync(open, 0o777);
    rootOnly = join(open, 'root-only');
    mkdirSync(rootOnly, { mode: 0o700 });
    rootWrites = join(open, 'root-writes');
    mkdirSync(rootWrites, { mode: 0o755 });
    image = join(open, 'image.img');
    writeRandomFile(image, 4 * MiB);
    chmodSync(image, 0o644);
    // Random bytes, then zeros that must be written too (a test loop device starts out random).
    decompressed = join(open, 'decompressed.img');
    writeFileSync(decompressed, Buffer.concat([readFileSync(image), Buffer.alloc(12 * MiB)]));
    compressed = join(open, 'image.img.xz');
    writeFileSync(compressed, execFileSync('xz', ['-c', '-0', '-T1', decompressed], { maxBuffer: 64 * MiB }));
    chmodSync(compressed, 0o644);
    cache = join(open, 'cache');
    mkdirSync(cache);
    chownSync(cache, user.uid, user.gid);
  });
  afterAll(() => removeRule());

  it('a flash: only the broker and the helper are root; the command line and the image reader are the user', async () => {
    const loop = loopFor(8 * MiB);
    const { run, seen } = await sudoSluice(['flash', '--yes', '--json', '--no-eject', image, loop.path]);
    expect(run.code, run.stderr).toBe(0);
    expect(
      readFileSync(loop.backing)
        .subarray(0, 4 * MiB)
        .equals(readFileSync(image)),
    ).toBe(true);
    const root = seen.filter((p) => p.uids.some((id) => id === 0));
    expect(root.filter((p) => isHelperProcess(p.argv))).toHaveLength(1);
    // The broker: the one root process that is not the helper.
    expect(root.filter((p) => !isHelperProcess(p.argv)).map((p) => p.argv.at(-1))).toEqual([loop.path]);
    const asUser = seen.filter((p) => !root.includes(p));
    expect(asUser.length).toBeGreaterThanOrEqual(2);
    for (const p of asUser)
      expect({ uids: p.uids, gids: p.gids }).toEqual({ uids: Array(4).fill(user.uid), gids: Array(4).fill(user.gid) });
  });

  it('installer mode through sudo: the ISO read and the stick built as the user, written by the helper through the channel', async () => {
    const iso = join(open, 'installer.iso');
    copyFileSync(efiInstallerIso(), iso);
    chmodSync(iso, 0o644);
    const loop = loopFor(128 * MiB);
    const { run, seen } = await sudoSluice(['flash', '--yes', '--no-eject', '--iso-mode', 'files', iso, loop.path]);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toMatch(/made an installer stick: .* holding the ISO's 47 files .*, written and read back in /);
    const root = seen.filter((p) => p.uids.some((id) => id === 0));
    expect(root.filter((p) => isHelperProcess(p.argv))).toHaveLength(1);
    expect(root.filter((p) => !isHelperProcess(p.argv)).map((p) => p.argv.at(-1))).toEqual([loop.path]);
    const dir = scratchDir();
    execFileSync('sh', [
      '-c',
      `dd if=${loop.backing} of=${dir}/p.img bs=4M skip=1 status=none && fsck.fat -n ${dir}/p.img`,
    ]);
    const verify = await sudoSluice(['verify', '--iso-mode', 'files', iso, loop.path]);
    expect(verify.run.code, verify.run.stderr).toBe(0);
    expect(verify.run.stdout).toMatch(/every file of .* \(47 files, .*\) is on the stick, identical\./);
  });

  it('a compressed image is decoded as the user and reaches the helper through the channel: written, verified, the same bytes', async () => {
    const loop = loopFor(24 * MiB);
    const { run, byPid } = await sudoSluice(
      ['flash', '--yes', '--no-eject', compressed, loop.path],
      { SLUICE_CACHE_DIR: cache },
      () => true,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/written and verified/);
    expect(holds(loop, decompressed)).toBe(true);
    // Every process but the broker, the helper and what the helper runs shows the user's ids in
    // /proc/PID/status. The broker's own look-up of the user (getent passwd UID) is root's too.
    const brokerLookup = (p: SeenProcess) =>
      p.argv.join(' ') === `getent passwd ${user.uid}` && byPid.get(p.parent)?.uids.includes(0) === true;
    const others = [...byPid].filter(([pid, p]) => !helperOrItsChild(pid, byPid) && !brokerLookup(p));
    const root = others.filter(([, p]) => p.uids.some((id) => id === 0));
    expect(root.map(([, p]) => p.argv.slice(-2))).toEqual([[compressed, loop.path]]);
    const asUser = others.filter(([, p]) => !p.uids.includes(0)).map(([, p]) => p);
    // The decoder, and the system's xz it runs, were seen: the look reached past Node's own processes.
    expect(asUser.some((p) => p.argv.some((a) => a.endsWith('out/run/decoder.js')))).toBe(true);
    expect(asUser.some((p) => /(^|\/)xz$/.test(p.argv[0] ?? ''))).toBe(true);
    for (const p of asUser)
      expect({ argv: p.argv, uids: p.uids, gids: p.gids }).toEqual({
        argv: p.argv,
        uids: Array(4).fill(user.uid),
        gids: Array(4).fill(user.gid),
      });
  });

  it('a compressed image to two cards through sudo: both written and verified, the same bytes', async () => {
    const loops = [loopFor(24 * MiB), loopFor(24 * MiB)];
    const { run } = await sudoSluice(['flash', '--yes', '--no-eject', compressed, ...loops.map((l) => l.path)], {
      SLUICE_CACHE_DIR: cache,
    });
    expect(run.code, run.stderr).toBe(0);
    for (const loop of loops) {
      expect(run.stdout).toContain(`${loop.path}: written and verified`);
      expect(holds(loop, decompressed)).toBe(true);
    }
  });

  /** What a file target or a backup in `folder` is refused with: the user's "permission denied", in a sentence. */
  function deniedIn(folder: string, file: string): string {
    return folder === rootOnly
      ? `No permission to reach ${join(folder, file)}: a folder on its way may not be entered (permission denied). Choose a folder you can write to.`
      : `No permission to create ${join(folder, file)}.incomplete (permission denied): choose a folder you can write to.`;
  }

  it('a file target in a folder only root may write (or enter): refused with the user’s "permission denied", nothing created', async () => {
    for (const folder of [rootOnly, rootWrites]) {
      const { run } = await sudoSluice(['flash', '--yes', compressed, join(folder, 'out.img')]);
      expect(run.code).toBe(EXIT.refused);
      expect(run.stdout + run.stderr).toContain(deniedIn(folder, 'out.img'));
      expect(readdirSync(folder)).toEqual([]);
    }
  });

  it('a backup into a folder only root may write (or enter): refused the same way, nothing created', async () => {
    const loop = loopFor(4 * MiB);
    for (const folder of [rootOnly, rootWrites]) {
      const { run } = await sudoSluice(['backup', '--yes', loop.path, join(folder, 'backup.img')]);
      expect(run.code).toBe(EXIT.refused);
      expect(run.stdout + run.stderr).toContain(deniedIn(folder, 'backup.img'));
      expect(readdirSync(folder)).toEqual([]);
    }
  });

  it('a station log that is a symbolic link is refused, and one in a root-only folder too; nothing is written', async () => {
    const loop = loopFor(8 * MiB);
    const before = digestFile(loop.backing);
    const aim = join(rootOnly, 'preload');
    const link = join(open, 'station.jsonl');
    symlinkSync(aim, link);
    const linked = await sudoSluice(['station', image, '--yes', '--virtual', '--count', '1', '--log', link]);
    expect(linked.run.code).toBe(2);
    expect(linked.run.stderr).toContain(`${link} is a symbolic link; the station log must be a file of its own`);
    const walled = await sudoSluice([
      'station',
      image,
      '--yes',
      '--virtual',
      '--count',
      '1',
      '--log',
      join(rootOnly, 'station.jsonl'),
    ]);
    expect(walled.run.stderr).toMatch(/the station log cannot be opened: EACCES: permission denied/);
    expect(existsSync(aim)).toBe(false);
    expect(readdirSync(rootOnly)).toEqual([]);
    expect(digestFile(loop.backing)).toBe(before);
  });

  describe('the image cache, for a catalogue entry', () => {
    let server: CatalogueServer;
    beforeAll(async () => {
      const served = scratchDir();
      chmodSync(served, 0o755);
      server = await serveCatalogue(served);
    });
    afterAll(() => server.close());

    /** `sudo sluice flash os:Test OS Lite` from the test catalogue, with `cache` as the cache folder. */
    async function flashEntry(cache: string): Promise<{ run: CliRun; loop: LoopDevice }> {
      const loop = loopFor(IMAGE_SIZE + 4 * MiB);
      const { run } = await sudoSluice(
        ['flash', '--yes', '--no-eject', '--exact', '--repo', server.top, 'os:Test OS Lite', loop.path],
        { SLUICE_CACHE_DIR: cache },
      );
      return { run, loop };
    }

    it('a cache folder that is a symbolic link is refused with a sentence; the image is written, nothing kept', async () => {
      const aim = join(rootOnly, 'cache');
      const link = join(open, 'cache-link');
      symlinkSync(aim, link);
      const { run, loop } = await flashEntry(link);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(`${link} is a symbolic link, and the image cache is kept only in a real folder`);
      expect(holds(loop, server.images.lite.raw)).toBe(true);
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(readdirSync(rootOnly)).toEqual([]);
    });

    it('a cache folder in a folder only root may write: the user’s "permission denied" in a sentence, nothing created', async () => {
      const cache = join(rootOnly, 'cache');
      const { run, loop } = await flashEntry(cache);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(
        /Test OS Lite is downloaded without being kept in the cache: the image cache folder .*root-only\/cache\/images cannot be made \(EACCES: permission denied/,
      );
      expect(holds(loop, server.images.lite.raw)).toBe(true);
      expect(readdirSync(rootOnly)).toEqual([]);
    });
  });

  it('a customisation file only root may read is refused, and its bytes are nowhere on the card', async () => {
    const loop = loopFor(8 * MiB);
    const before = digestFile(loop.backing);
    const secret = `echo ${'S3CRET'.repeat(8)}\n`;
    const script = join(rootOnly, 'first-run.sh');
    writeFileSync(script, secret, { mode: 0o600 });
    const { run } = await sudoSluice(['flash', '--yes', '--no-eject', image, loop.path, '--first-run-script', script]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`The first-run script ${script} cannot be read: EACCES: permission denied`);
    expect(digestFile(loop.backing)).toBe(before);
    expect(readFileSync(loop.backing).includes(Buffer.from('S3CRET'.repeat(8)))).toBe(false);
  });
});
