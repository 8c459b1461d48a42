/**
 * One authorization per batch: a station run by a user who is not root asks for root once, when
 * it is armed, and its root side then runs each card's job itself, in its one process, for a card
 * that passes the station's rules as root sees them. The elevation tools are the real sudo and pkexec (with a
 * private polkitd), each behind a shim on PATH that counts how often it is asked.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RELEASE_WAIT_MS } from '../../../node/fifo-open.js';
import { MiB } from '../../../common/domain/units.js';
import { mediumId } from '../../../user/drives/medium.js';
import { assertTestTarget, CLI, collect, spawnCommand, waitForEvent, type CliRun } from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import {
  attachLoop,
  createLoop,
  digestFile,
  readBytes,
  scratchDir,
  writeRandomFile,
  type LoopDevice,
} from '../../support/loop-device.js';
import { spawnWithPolkit } from '../../support/polkit.js';
import {
  hasExited,
  threadsInFifoOpen,
  waitForDescendant,
  waitForExit,
  watchDescendants,
} from '../../support/processes.js';
import {
  allowSudo,
  allowSudoForHelper,
  asTestUser,
  builtCli,
  builtHelper,
  ensureTestUser,
} from '../../support/unprivileged.js';

const STATION_DRIVER = resolve('out/test/support/station-driver.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A scratch directory the test user can read and write: the image, the log and the shims go here. */
function sharedDir(): string {
  const dir = scratchDir();
  const { uid, gid } = ensureTestUser();
  chownSync(dir, uid, gid);
  chmodSync(dir, 0o755);
  return dir;
}

/** A random image of `size` bytes the test user can read. */
function imageIn(dir: string, size: number): string {
  const image = join(dir, 'image.img');
  writeRandomFile(image, size);
  chmodSync(image, 0o644);
  return image;
}

/**
 * A directory holding `tool` as a shim that notes each call in `calls` and then runs the real
 * one: put first on PATH, it counts the authorizations asked for.
 */
function countingShim(dir: string, tool: 'sudo' | 'pkexec'): { bin: string; calls: () => number } {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { mode: 0o755 });
  const log = join(dir, `${tool}-calls`);
  writeFileSync(log, '', { mode: 0o666 });
  chmodSync(log, 0o666);
  writeFileSync(join(bin, tool), `#!/bin/sh\necho "$*" >> '${log}'\nexec /usr/bin/${tool} "$@"\n`, { mode: 0o755 });
  return { bin, calls: () => readFileSync(log, 'utf8').split('\n').filter(Boolean).length };
}

/** A card's backing file, not yet attached (inserted). */
function blankCard(dir: string, name: string, size: number): string {
  const backing = join(dir, name);
  writeRandomFile(backing, size);
  if (!/^\/dev\/shm\/sluice-test-[^/]+\/[^/]+$/.test(backing)) throw new Error(`${backing} is not this test's`);
  return backing;
}

function insert(backing: string): LoopDevice {
  const loop = attachLoop(backing);
  assertTestTarget(loop.path);
  return loop;
}

function expectImageOn(loop: LoopDevice, image: string): void {
  const bytes = readFileSync(image);
  expect(readBytes(loop.backing, 0, bytes.length).equals(bytes), loop.path).toBe(true);
}

/** How the test user starts the station: it asks for root itself through sudo or pkexec, or runs all of it with `sudo sluice`. */
type Start = 'sudo' | 'pkexec' | 'sudo sluice';

/** `sluice station` as the test user started as `how`, for the cards in `slots`, stopping after three. */
function stationCommand(image: string, slots: readonly string[], log: string, how: Start, bin: string) {
  const path = `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`;
  const cli = how === 'sudo sluice' ? ['sudo', '-n', '-u', 'root', ...builtCli()] : [process.execPath, CLI];
  return [
    ...asTestUser(),
    'env',
    `PATH=${path}`,
    ...cli,
    'station',
    '--yes',
    '--json',
    '--virtual',
    ...(how === 'sudo sluice' ? [] : ['--elevate', how]),
    '--count',
    '3',
    '--log',
    log,
    ...slots.flatMap((slot) => ['--slots', slot]),
    image,
  ];
}

/** Arms a station through `start`, inserts three cards 0.3 s apart, and checks them and the count. */
async function threeCards(
  how: Start,
  start: (command: string[]) => ChildProcess,
): Promise<{ run: CliRun; calls: number; helpers: string[][] }> {
  const dir = sharedDir();
  const image = imageIn(dir, 6 * MiB + 123);
  const shim = countingShim(dir, how === 'pkexec' ? 'pkexec' : 'sudo');
  const slots = [0, 1, 2].map((i) => blankCard(dir, `card-${i}.img`, 8 * MiB));
  const child = start(stationCommand(image, slots, join(dir, 'station.jsonl'), how, shim.bin));
  const watch = watchDescendants(child.pid ?? -1, (argv) => argv.some((a) => a.endsWith('out/run/helper.js')));
  const done = collect(child);
  await waitForEvent(child, (e) => e.type === 'armed');
  const cards: LoopDevice[] = [];
  for (const slot of slots) {
    cards.push(insert(slot));
    await sleep(300);
  }
  const run = await done;
  expect(run.stderr).not.toMatch(/root side refused|Error/);
  expect(run.code).toBe(0);
  // Other loop devices come and go on this machine: they are refused as outside the slots, and left out here.
  const rows = run.events.filter((e) => e.type === 'row' && e['phase'] === 'done' && slots.includes(String(e['slot'])));
  expect(rows.map((r) => r['result'])).toEqual(['ok', 'ok', 'ok']);
  for (const card of cards) expectImageOn(card, image);
  const helpers = [...watch.stop().values()]
    .filter((p) => p.uids[1] === 0 && p.argv[0] === process.execPath)
    .map((p) => p.argv);
  // Root ran one process, the station's own side, and every card's job inside it: no process per card.
  expect(helpers).toHaveLength(1);
  expect(helpers[0]).toContain('--station');
  return { run, calls: shim.calls(), helpers };
}

describeDevices('an armed station through sudo, as an unprivileged user', () => {
  let removeRule: () => void = () => undefined;
  beforeAll(() => {
    ensureTestUser();
    removeRule = allowSudoForHelper();
  });
  afterAll(() => removeRule());

  it('writes three cards with one authorization', async () => {
    const { calls } = await threeCards('sudo', (command) => spawnCommand(command));
    expect(calls).toBe(1);
  });

  it('refuses, as root, a card whose medium was there at arming, one outside the slots, one outside the size range, and a job for another medium, when the unprivileged side asks for them anyway', async () => {
    const dir = sharedDir();
    const imageSize = 3 * MiB + 7;
    const image = imageIn(dir, imageSize);
    const before = createLoop({ size: 4 * MiB, dir });
    assertTestTarget(before.path);
    const [fresh, stranger, swapped] = ['fresh', 'stranger', 'swapped'].map((n) => blankCard(dir, `${n}.img`, 4 * MiB));
    const large = blankCard(dir, 'large.img', 8 * MiB);
    const slots = [before.backing, fresh ?? '', swapped ?? '', large];
    const limits = { minSize: 4 * MiB, maxSize: 4 * MiB, slots, virtual: true };
    const [file = '', ...args] = [...asTestUser(), process.execPath, STATION_DRIVER, JSON.stringify(limits)];
    const driver = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const done = collect(driver);
    await waitForEvent(driver, (e) => e.type === 'armed');
    const untouched = digestFile(before.backing);
    const cards = {
      fresh: insert(fresh ?? ''),
      stranger: insert(stranger ?? ''),
      swapped: insert(swapped ?? ''),
      large: insert(large),
    };
    const ask = async (loop: LoopDevice, medium: string | null) =>
      driver.stdin.write(`${JSON.stringify({ device: loop.path, medium, image, imageSize })}\n`);
    await ask(before, await mediumId(before.path));
    await ask(cards.stranger, await mediumId(cards.stranger.path));
    await ask(cards.swapped, await mediumId(before.path));
    await ask(cards.large, await mediumId(cards.large.path));
    await ask(cards.fresh, await mediumId(cards.fresh.path));
    driver.stdin.end();
    const run = await done;

    const results = new Map(run.events.filter((e) => e.type === 'result').map((e) => [e['device'], e['results']]));
    expect(results.get(before.path)).toMatchObject([
      { status: 'failed', message: expect.stringContaining('there before the station was armed') },
    ]);
    expect(digestFile(before.backing)).toBe(untouched);
    expect(results.get(cards.stranger.path)).toMatchObject([
      { status: 'failed', message: expect.stringContaining("not in one of the station's slots") },
    ]);
    expect(results.get(cards.swapped.path)).toMatchObject([
      {
        status: 'failed',
        code: 'protocol-error',
        message: expect.stringContaining('not a flash of the medium the station admitted'),
      },
    ]);
    expect(results.get(cards.large.path)).toMatchObject([
      { status: 'failed', message: expect.stringContaining("outside the station's range") },
    ]);
    expect(results.get(cards.fresh.path)).toMatchObject([{ status: 'ok', bytes: imageSize, verified: true }]);
    expectImageOn(cards.fresh, image);
    expect(run.code).toBe(0);
  });

  it("ends the job of a card whose image FIFO the app removed while root's open of it waited: no thread stays blocked in it", async () => {
    const dir = sharedDir();
    const image = imageIn(dir, MiB);
    const slot = blankCard(dir, 'card.img', 4 * MiB);
    const limits = { minSize: 4 * MiB, maxSize: 4 * MiB, slots: [slot], virtual: true };
    const [file = '', ...args] = [...asTestUser(), process.execPath, STATION_DRIVER, JSON.stringify(limits)];
    const driver = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const done = collect(driver);
    let root = -1;
    try {
      await waitForEvent(driver, (e) => e.type === 'armed');
      root = await waitForDescendant(
        driver.pid ?? -1,
        (argv) => argv[0] === process.execPath && argv.includes('--station'),
      );
      const card = insert(slot);
      // This side never opens the card's image FIFO: root's open of it waits until the app removes it.
      const request = { device: card.path, medium: await mediumId(card.path), image, imageSize: MiB, feed: false };
      driver.stdin.write(`${JSON.stringify(request)}\n`);
      await expect.poll(() => threadsInFifoOpen(root)).toBe(1);
      rmSync(cardImageFifo(root));
      driver.stdin.write(`${JSON.stringify({ cancel: card.path })}\n`);
      await waitForEvent(driver, (e) => e.type === 'result' && e['device'] === card.path);
      // Released through the inode root holds, though nobody can reach it by name any more.
      await expect.poll(() => threadsInFifoOpen(root), { timeout: RELEASE_WAIT_MS }).toBe(0);
      driver.stdin.end();
      // Bounded, so that a station that never ends fails here and still reaches the finally below.
      const run = await Promise.race([done, new Promise<null>((r) => setTimeout(() => r(null), 60_000).unref())]);
      if (run === null) throw new Error('the station has not ended 60 s after its last card was cancelled');

      const result = run.events.find((e) => e.type === 'result' && e['device'] === card.path);
      expect(result?.['results']).toMatchObject([{ status: 'cancelled' }]);
      expect(run.stderr).not.toContain('has not returned');
      expect(run.code).toBe(0);
      // Root's side ended its last card and exited, rather than being left behind by a stop that gave up on it.
      await waitForExit(root, 15_000);
    } finally {
      // A failed run must not leave root's side blocked: killing it ends its open.
      if (root > 0 && !hasExited(root)) process.kill(root, 'SIGKILL');
      driver.kill('SIGKILL');
    }
  });
});

/** The image FIFO of the card channel that the station's root process `pid` has open (by its control FIFOs). */
function cardImageFifo(pid: number): string {
  const channels = readdirSync(`/proc/${pid}/fd`)
    .map((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((path) => path.endsWith('/to-helper'))
    .map((path) => dirname(path));
  const cards = [...new Set(channels)].filter((dir) => readdirSync(dir).includes('image'));
  expect(cards).toHaveLength(1);
  return join(cards[0] ?? '', 'image');
}

describeDevices('sudo sluice station, as an unprivileged user', () => {
  let removeRule: () => void = () => undefined;
  beforeAll(() => {
    ensureTestUser();
    removeRule = allowSudo(builtCli());
  });
  afterAll(() => removeRule());

  it('writes three cards with the one authorization the user gave sudo, each card held to the rules by root', async () => {
    const { calls } = await threeCards('sudo sluice', (command) => spawnCommand(command));
    expect(calls).toBe(1);
  });
});

describeDevices('an armed station through pkexec, with a private polkitd', () => {
  beforeAll(() => ensureTestUser());

  it('writes three cards with one authorization', async () => {
    const { calls } = await threeCards('pkexec', (command) =>
      spawnWithPolkit(command, { helperProgram: builtHelper().file, answer: 'YES' }),
    );
    expect(calls).toBe(1);
  });
});
