/**
 * The helper started the way a user who is not root starts it: the CLI (or a stand-in app) runs as
 * an unprivileged test user, and only sudo or pkexec can give the helper the root it needs to open
 * a loop device. Everything else (who listens, who notices whose death, cancelling) is checked on
 * that real arrangement.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import {
  chownSync,
  closeSync,
  constants,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { shellQuote } from '../../../user/launcher/elevation/osascript.js';
import {
  assertTestTarget,
  CLI,
  collect,
  spawnCli,
  spawnCommand,
  waitForEvent,
  type CliRun,
} from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import {
  createLoop,
  digestFile,
  partitionedLoop,
  readBytes,
  scratchDir,
  writeRandomFile,
  type LoopDevice,
} from '../../support/loop-device.js';
import { ACTION_ID, packagedLayout, READ_ACTION_ID, spawnWithPolkit, type PolkitAnswer } from '../../support/polkit.js';
import {
  findDescendant,
  isHelper,
  listeningSocketsOf,
  waitForDescendant,
  waitForExit,
} from '../../support/processes.js';
import { slowCard } from '../../support/throttle.js';
import { fakeCard } from '../../support/fake-card.js';
import {
  allowSudoForHelper,
  asTestUser,
  builtHelper,
  ensureTestUser,
  shareWithTestUser,
} from '../../support/unprivileged.js';

const DRIVER = resolve('out/test/support/helper-driver.js');

/** An image the test user can read, and a loop device (root's) to write it to. */
function imageAndLoop(imageBytes: number, loopBytes: number): { image: string; loop: LoopDevice } {
  const dir = scratchDir();
  const image = join(dir, 'image.img');
  writeRandomFile(image, imageBytes);
  shareWithTestUser(image);
  const loop = createLoop({ size: loopBytes, dir });
  assertTestTarget(loop.path);
  return { image, loop };
}

/** `sluice flash --yes --json --elevate TOOL IMAGE TARGET` as the test user. */
function flashAsUser(image: string, target: string, elevate: 'sudo' | 'pkexec', cgroup?: string): ChildProcess {
  assertTestTarget(target);
  return spawnCli(['flash', '--yes', '--json', '--elevate', elevate, image, target], {
    wrapper: asTestUser(),
    ...(cgroup === undefined ? {} : { cgroup }),
  });
}

function resultOf(run: CliRun): Record<string, unknown> | undefined {
  return run.events.find((e) => e.type === 'result');
}

/** The image file is on the device, byte for byte. */
function expectWritten(loop: LoopDevice, image: string): void {
  const bytes = readFileSync(image);
  expect(readBytes(loop.backing, 0, bytes.length).equals(bytes)).toBe(true);
}

interface SlowFlash {
  cli: ChildProcess;
  done: Promise<CliRun>;
  /** The root helper's pid. */
  helper: number;
  /** The FIFO directory the app made, from the helper's command line. */
  channelDir: string;
  loop: LoopDevice;
  /** Removes the throttle, and the channel directory an app killed with -9 could not remove itself. */
  cleanUp(): void;
}

/** Starts a throttled 96 MiB flash as the test user; resolves once real writing is under way. */
async function slowFlash(): Promise<SlowFlash> {
  const { image, loop, group } = slowCard();
  shareWithTestUser(image);
  const cli = flashAsUser(image, loop.path, 'sudo', group.dir);
  const done = collect(cli);
  await waitForEvent(cli, (e) => e.type === 'progress' && e['phase'] === 'writing' && Number(e['bytesDone']) > 8 * MiB);
  const helper = await waitForDescendant(cli.pid ?? 0, isHelper);
  const argv = readFileSync(`/proc/${helper}/cmdline`, 'utf8').split('\0');
  const channelDir = argv[argv.indexOf('--channel') + 1] ?? '';
  expect(channelDir).toMatch(/^\/tmp\/sluice-helper-/);
  const cleanUp = () => {
    group.remove();
    rmSync(channelDir, { recursive: true, force: true });
  };
  return { cli, done, helper, channelDir, loop, cleanUp };
}

describeDevices('through sudo, as an unprivileged user', () => {
  let removeRule: () => void = () => undefined;
  beforeAll(() => {
    ensureTestUser();
    removeRule = allowSudoForHelper();
  });
  afterAll(() => removeRule());

  it('flashes and verifies; the user could not have written the device without it', async () => {
    const { image, loop } = imageAndLoop(6 * MiB + 123, 8 * MiB);
    const [setpriv = '', ...asUser] = asTestUser();
    expect(() => execFileSync(setpriv, [...asUser, 'test', '-w', loop.path])).toThrow();

    const run = await collect(flashAsUser(image, loop.path, 'sudo'));

    expect(run.code).toBe(0);
    expect(resultOf(run)).toMatchObject({ status: 'ok', target: loop.path, bytes: 6 * MiB + 123, verified: true });
    expectWritten(loop, image);
  });

  it('verify gets root the same way: the user cannot read the device, and sluice verify compares it through the helper', async () => {
    const { image, loop } = imageAndLoop(3 * MiB + 5, 4 * MiB);
    expect((await collect(flashAsUser(image, loop.path, 'sudo'))).code).toBe(0);
    const [setpriv = '', ...asUser] = asTestUser();
    expect(() => execFileSync(setpriv, [...asUser, 'test', '-r', loop.path])).toThrow();

    const run = await collect(
      spawnCli(['verify', '--json', '--elevate', 'sudo', image, loop.path], { wrapper: asTestUser() }),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(resultOf(run)).toMatchObject({
      status: 'ok',
      target: loop.path,
      written: false,
      verified: true,
      bytes: 3 * MiB + 5,
    });

    // One byte changed behind Sluice's back: found at its offset, still as the user.
    const backing = openSync(loop.backing, 'r+');
    writeSync(backing, Buffer.from([(readBytes(loop.backing, 2 * MiB + 9, 1)[0] ?? 0) ^ 0x01]), 0, 1, 2 * MiB + 9);
    closeSync(backing);
    const bad = await collect(
      spawnCli(['verify', '--json', '--elevate', 'sudo', image, loop.path], { wrapper: asTestUser() }),
    );
    expect(bad.code).toBe(1);
    expect(resultOf(bad)).toMatchObject({ status: 'failed', code: 'verify-mismatch', offset: 2 * MiB + 9 });
  });

  it('image bytes through a FIFO the app made, as osascript needs (sudo is the tool here that can carry it)', async () => {
    const { image, loop } = imageAndLoop(5 * MiB + 77, 8 * MiB);
    const spec = { image, imageSize: 5 * MiB + 77, targets: [loop.path], imageThroughFifo: true };
    const run = await collect(spawnCommand([...asTestUser(), process.execPath, DRIVER, JSON.stringify(spec)]));

    expect(run.events.find((e) => e.type === 'ready')?.['pid']).toBeGreaterThan(0);
    expect(resultOf(run)).toMatchObject({ status: 'ok', bytes: 5 * MiB + 77, verified: true });
    expectWritten(loop, image);
  });

  it('an image file with ranges left out, through the FIFO: only its ranges travel, land in place, and are verified; the rest of the drive is as it was', async () => {
    const size = 5 * MiB + 77;
    const { image, loop } = imageAndLoop(size, 8 * MiB);
    const before = readFileSync(loop.backing);
    const extents: [number, number][] = [
      [0, MiB],
      [2 * MiB, MiB + 8192],
      [4 * MiB, MiB + 77],
    ];
    const spec = { image, imageSize: size, targets: [loop.path], imageThroughFifo: true, extents };
    const run = await collect(spawnCommand([...asTestUser(), process.execPath, DRIVER, JSON.stringify(spec)]));
    expect(resultOf(run), run.stderr).toMatchObject({
      status: 'ok',
      bytes: 3 * MiB + 8192 + 77,
      skipped: 2 * MiB - 8192,
      verified: true,
    });
    const after = readFileSync(loop.backing);
    const bytes = readFileSync(image);
    for (const [offset, length] of extents)
      expect(after.subarray(offset, offset + length).equals(bytes.subarray(offset, offset + length))).toBe(true);
    const untouched: [number, number][] = [
      [MiB, MiB],
      [3 * MiB + 8192, MiB - 8192],
    ];
    for (const [offset, length] of untouched)
      expect(after.subarray(offset, offset + length).equals(before.subarray(offset, offset + length))).toBe(true);
  });

  it("a repair of an .xz image: the helper asks the user's CLI for the bad block through the FIFO channel, and the CLI decodes the image again as the user", async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 24 * MiB);
    execFileSync('sh', ['-c', 'xz -0 -T2 -c image.img > image.img.xz'], { cwd: dir });
    shareWithTestUser(`${image}.xz`);
    const card = await fakeCard(64 * MiB, { kind: 'flaky', at: 20 * MiB + 4096, always: false });
    const run = await collect(flashAsUser(`${image}.xz`, card.path, 'sudo'));
    expect(run.code, run.stderr).toBe(0);
    expect(resultOf(run)).toMatchObject({ status: 'ok', verified: true, repaired: { blocks: 1, offsets: [20 * MiB] } });
    expect(readBytes(card.backing, 0, 24 * MiB).equals(readFileSync(image))).toBe(true);
  });

  it('a backup through the image FIFO, as osascript needs: the bytes of the drive reach a file of the user, equal to the drive', async () => {
    const drive = createLoop({ size: 12 * MiB + 4096 });
    const dir = mkdtempSync('/dev/shm/sluice-test-backup-');
    const { uid, gid } = ensureTestUser();
    chownSync(dir, uid, gid);
    try {
      const file = join(dir, 'drive.img');
      const spec = { imageThroughFifo: true, backup: { drive: drive.path, file } };
      const run = await collect(spawnCommand([...asTestUser(), process.execPath, DRIVER, JSON.stringify(spec)]));
      expect(resultOf(run), run.stderr).toMatchObject({
        status: 'ok',
        target: file,
        bytes: 12 * MiB + 4096,
        verified: true,
      });
      expect(readFileSync(file).equals(readFileSync(drive.backing))).toBe(true);
      expect(statSync(file).uid).toBe(uid);

      // Refused by the helper itself, it never opens the FIFO: the app's wait for it ends with the helper.
      const partitioned = await partitionedLoop('label: dos\n1M,4M,83\n', 8 * MiB);
      const refused = join(dir, 'partition.img');
      const started = performance.now();
      const run2 = await collect(
        spawnCommand([
          ...asTestUser(),
          process.execPath,
          DRIVER,
          JSON.stringify({
            imageThroughFifo: true,
            backup: { drive: `${partitioned.path}p1`, file: refused, size: 4 * MiB },
          }),
        ]),
      );
      expect(resultOf(run2), run2.stderr).toMatchObject({ status: 'failed', code: 'target-is-partition' });
      expect((performance.now() - started) / 1000).toBeLessThan(10);
      expect(existsSync(refused)).toBe(false);
      expect(existsSync(`${refused}.incomplete`)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('nothing listens during a flash: ss shows no listening socket of the root helper or the app', async () => {
    const { cli, done, helper, cleanUp } = await slowFlash();
    try {
      expect(await listeningSocketsOf([helper, cli.pid ?? 0])).toEqual([]);
      cli.kill('SIGINT');
      expect(resultOf(await done)).toMatchObject({ status: 'cancelled' });
    } finally {
      cleanUp();
    }
  });

  it('Ctrl-C on a 20 MB/s card: cancelled within 2 s through the FIFO channel, partition table area blank', async () => {
    const { cli, done, loop, cleanUp } = await slowFlash();
    try {
      const asked = performance.now();
      cli.kill('SIGINT');
      const run = await done;
      const seconds = (performance.now() - asked) / 1000;

      expect(run.code).toBe(130);
      expect(seconds).toBeLessThan(2);
      expect(resultOf(run)).toMatchObject({ status: 'cancelled', target: loop.path });
      expect(readBytes(loop.backing, 0, 1 * MiB).every((b) => b === 0)).toBe(true);
    } finally {
      cleanUp();
    }
  });

  it('kill -9 of the root helper: the app reports helper-died naming SIGKILL', async () => {
    const { done, helper, cleanUp } = await slowFlash();
    try {
      process.kill(helper, 'SIGKILL');
      const run = await done;
      expect(run.code).toBe(1);
      expect(resultOf(run)).toMatchObject({
        status: 'failed',
        code: 'helper-died',
        message: expect.stringContaining('killed by SIGKILL'),
      });
    } finally {
      cleanUp();
    }
  });

  /** Kills the app with -9: the root helper must stop within 2 s, mid-job (the first MiB, written last, still blank). */
  async function killAppExpectingHelperToStop(flash: SlowFlash): Promise<void> {
    flash.cli.kill('SIGKILL');
    expect(await waitForExit(flash.helper, 5000)).toBeLessThan(2000);
    await flash.done;
    expect(readBytes(flash.loop.backing, 0, 1 * MiB).every((b) => b === 0)).toBe(true);
  }

  it('kill -9 of the app: the root helper stops within 2 s (end of file on its FIFO)', async () => {
    const flash = await slowFlash();
    try {
      await killAppExpectingHelperToStop(flash);
    } finally {
      flash.cleanUp();
    }
  });

  it('kill -9 of the app while another process holds its FIFO open: the parent watch stops the helper within 2 s', async () => {
    const flash = await slowFlash();
    // A second writer on to-helper: the app's death no longer ends the helper's input.
    const extraWriter = openSync(join(flash.channelDir, 'to-helper'), constants.O_WRONLY | constants.O_NONBLOCK);
    try {
      await killAppExpectingHelperToStop(flash);
    } finally {
      closeSync(extraWriter);
      flash.cleanUp();
    }
  });
});

describeDevices('sudo refusing', () => {
  it('without a rule and without a terminal: elevation-denied, exit 5, the device untouched', async () => {
    ensureTestUser();
    const { image, loop } = imageAndLoop(2 * MiB, 4 * MiB);
    const before = digestFile(loop.backing);

    const run = await collect(flashAsUser(image, loop.path, 'sudo'));

    expect(run.code).toBe(5);
    expect(resultOf(run)).toMatchObject({
      status: 'failed',
      code: 'elevation-denied',
      message: expect.stringContaining('a password is required'),
    });
    expect(digestFile(loop.backing)).toBe(before);
  });
});

describeDevices('through pkexec, with a private polkitd', () => {
  beforeAll(() => ensureTestUser());

  /** The CLI as the test user, under a private polkit that answers `answer`; in a terminal when `tty`. */
  function pkexecFlash(image: string, target: string, answer: PolkitAnswer, tty: boolean): ChildProcess {
    assertTestTarget(target);
    const command = [
      ...asTestUser(),
      process.execPath,
      CLI,
      'flash',
      '--yes',
      '--json',
      '--elevate',
      'pkexec',
      image,
      target,
    ];
    return spawnWithPolkit(tty ? inTerminal(command) : command, { helperProgram: builtHelper().file, answer });
  }

  /** script(1) gives the command a terminal, so pkexec's own text agent asks for the password there. */
  function inTerminal(command: readonly string[]): string[] {
    return ['script', '--quiet', '--flush', '--return', '--command', command.map(shellQuote).join(' '), '/dev/null'];
  }

  it('authorized: flashes and verifies', async () => {
    const { image, loop } = imageAndLoop(4 * MiB + 9, 8 * MiB);
    const run = await collect(pkexecFlash(image, loop.path, 'YES', false));
    expect(run.code).toBe(0);
    expect(resultOf(run)).toMatchObject({ status: 'ok', bytes: 4 * MiB + 9, verified: true });
    expectWritten(loop, image);
  });

  it('not authorized: elevation-denied, exit 5, the device untouched', async () => {
    const { image, loop } = imageAndLoop(2 * MiB, 4 * MiB);
    const before = digestFile(loop.backing);
    const run = await collect(pkexecFlash(image, loop.path, 'NO', false));
    expect(run.code).toBe(5);
    expect(resultOf(run)).toMatchObject({
      status: 'failed',
      code: 'elevation-denied',
      message: expect.stringContaining('Not authorized'),
    });
    expect(digestFile(loop.backing)).toBe(before);
  });

  /** Waits for the password prompt of pkexec's text agent, returning everything shown so far. */
  function promptShown(child: ChildProcess): Promise<string> {
    let shown = '';
    return new Promise((resolvePromise) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        shown += chunk.toString();
        if (shown.includes('Password:')) resolvePromise(shown);
      });
    });
  }

  /**
   * Types `keys` at the prompt until the command ends. The agent flushes the terminal's input
   * after printing "Password:" (tcsetattr TCSAFLUSH), so keys sent too early are lost; repeating
   * them is what a person who got no reaction would do too.
   */
  async function typeAtPrompt(child: ChildProcess, keys: string, done: Promise<CliRun>): Promise<CliRun> {
    const timer = setInterval(() => child.stdin?.write(keys), 300);
    try {
      return await done;
    } finally {
      clearInterval(timer);
    }
  }

  it('the prompt names the drive; a wrong password is elevation-denied, and nothing is written', async () => {
    const { image, loop } = imageAndLoop(2 * MiB, 4 * MiB);
    const before = digestFile(loop.backing);
    const child = pkexecFlash(image, loop.path, 'AUTH_ADMIN', true);
    const done = collect(child);

    const shown = await promptShown(child);
    expect(shown).toMatch(
      new RegExp(
        `Authentication is required to write a disk image to a drive: .*run/helper\\.js .*-- ${loop.path}\\r?\\n`,
      ),
    );
    const run = await typeAtPrompt(child, 'not-the-password\r', done);

    expect(run.code).toBe(5);
    expect(resultOf(run)).toMatchObject({
      status: 'failed',
      code: 'elevation-denied',
      message: expect.stringContaining('Not authorized'),
    });
    expect(digestFile(loop.backing)).toBe(before);
  });

  it('Ctrl-C while the password prompt is open: cancelled, exit 130, nothing written, no helper left behind', async () => {
    const { image, loop } = imageAndLoop(2 * MiB, 4 * MiB);
    const before = digestFile(loop.backing);
    const child = pkexecFlash(image, loop.path, 'AUTH_ADMIN', true);
    const done = collect(child);

    await promptShown(child);
    child.stdin?.write('\x03');
    const run = await done;

    expect(run.code).toBe(130);
    expect(resultOf(run)).toMatchObject({ status: 'cancelled', bytes: 0 });
    expect(findDescendant(child.pid ?? 0, isHelper)).toBeNull();
    expect(digestFile(loop.backing)).toBe(before);
  });

  describe('the packaged launcher, as the deb and rpm install it, picks the prompt by the helper’s mode', () => {
    let resources: string;
    let launcher: string;
    beforeAll(() => {
      resources = packagedLayout();
      launcher = join(resources, 'sluice-helper');
    });

    /** The stand-in app as the test user, pkexec on the packaged launcher, in a terminal when `tty`. */
    function packagedRun(spec: object, answer: PolkitAnswer, action: string, tty: boolean): ChildProcess {
      const command = [...asTestUser(), process.execPath, DRIVER, JSON.stringify({ ...spec, packaged: resources })];
      return spawnWithPolkit(tty ? inTerminal(command) : command, { helperProgram: launcher, answer, action });
    }

    /** A drive to back up and the test user's folder for the backup file. */
    function backupSpec(): { drive: LoopDevice; file: string; spec: object } {
      const drive = createLoop({ size: 6 * MiB + 4096 });
      const dir = scratchDir();
      const { uid, gid } = ensureTestUser();
      chownSync(dir, uid, gid);
      const file = join(dir, 'drive.img');
      return { drive, file, spec: { imageThroughFifo: false, backup: { drive: drive.path, file } } };
    }

    it('a backup’s prompt says the drive is only read, and names it; a wrong password reads nothing', async () => {
      const { drive, file, spec } = backupSpec();
      const child = packagedRun(spec, 'AUTH_ADMIN', READ_ACTION_ID, true);
      const done = collect(child);
      const shown = await promptShown(child);
      expect(shown).toMatch(
        new RegExp(
          `Authentication is required to read a whole drive, to back it up or compare it \\(its file systems are unmounted; no data is written to it\\): ${launcher} --read-only --channel /tmp/sluice-helper-\\S+ --parent-pid \\d+ --source ${drive.path} --\\r?\\n`,
        ),
      );
      expect(shown).not.toContain('write a disk image');
      const run = await typeAtPrompt(child, 'not-the-password\r', done);
      // The agent's colour codes share the result's line, so the line is read as text.
      expect(run.stdout).toMatch(/"status":"failed".*"code":"elevation-denied".*Nothing was read\./);
      expect(existsSync(file)).toBe(false);
    });

    it('a flash’s prompt keeps its own words, naming the drive it writes', async () => {
      const { image, loop } = imageAndLoop(2 * MiB, 4 * MiB);
      const before = digestFile(loop.backing);
      const spec = { imageThroughFifo: false, image, imageSize: 2 * MiB, targets: [loop.path] };
      const child = packagedRun(spec, 'AUTH_ADMIN', ACTION_ID, true);
      const done = collect(child);
      const shown = await promptShown(child);
      expect(shown).toMatch(
        new RegExp(
          `Authentication is required to write a disk image to a drive: ${launcher} --write --channel /tmp/sluice-helper-\\S+ --parent-pid \\d+ -- ${loop.path}\\r?\\n`,
        ),
      );
      const run = await typeAtPrompt(child, 'not-the-password\r', done);
      expect(run.stdout).toMatch(/"status":"failed".*"code":"elevation-denied".*Nothing was written\./);
      expect(digestFile(loop.backing)).toBe(before);
    });

    it('authorized for reading: the launcher runs the read-only helper as root, and the backup equals the drive', async () => {
      const { drive, file, spec } = backupSpec();
      writeRandomFile(drive.backing, 6 * MiB + 4096);
      const run = await collect(packagedRun(spec, 'YES', READ_ACTION_ID, false));
      expect(resultOf(run), run.stderr).toMatchObject({ status: 'ok', target: file, bytes: 6 * MiB + 4096 });
      expect(readFileSync(file).equals(readFileSync(drive.backing))).toBe(true);
    });
  });
});
