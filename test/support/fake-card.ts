/**
 * Fake-capacity and failing cards as real block devices: a loop device over a file that a small
 * FUSE filesystem of our own serves (fake-card.py), mounted with direct_io so the page cache never
 * answers for the card. This kernel has no device-mapper, so this is how a test gets a drive that
 * drops writes, wraps around, fails, or corrupts a block.
 *
 * The loop device is registered like any other (attachLoop), so assertOwnedLoop accepts it and
 * nothing else; removeFakeCards() (run after every device suite) detaches it, unmounts the FUSE
 * filesystem and waits for its process to exit.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GiB, MiB } from '../../common/domain/units.js';
import { attachLoop, detachLoop, scratchDir, writeRandomFile, type LoopDevice } from './loop-device.js';

const SERVER = resolve('test/support/fake-card.py');
/** Debian's own Python, which python3-fusepy installs into (a python3 earlier on PATH may be another one). */
const PYTHON = '/usr/bin/python3';

export type FakeBehaviour =
  | { kind: 'honest' }
  /** Past `real` bytes, writes are dropped and reads give zeros. */
  | { kind: 'limbo'; real: number }
  /** Offsets are taken modulo `real`. */
  | { kind: 'wrap'; real: number }
  /** Reads and writes touching [from, to) fail with EIO. */
  | { kind: 'bad'; from: number; to: number }
  /** The 4 KiB block at `at` is stored with a flipped byte: by the first write covering it, or by every one. */
  | { kind: 'flaky'; at: number; always: boolean };

export interface FakeCard extends LoopDevice {
  /** What the card claims to hold: the loop device's size. */
  claimed: number;
  behaviour: FakeBehaviour;
  /** The FUSE mountpoint; the card is `${mountpoint}/card`. */
  mountpoint: string;
  server: ChildProcess;
  /** The file holding the bytes the card really stores. */
  store: string;
}

const cards: FakeCard[] = [];

/** The fake card of 4 GiB over 256 MiB of real store that the acceptance tests use. */
export const FAKE_CLAIMED = 4 * GiB;
export const FAKE_REAL = 256 * MiB;

function serverArgs(behaviour: FakeBehaviour): string[] {
  switch (behaviour.kind) {
    case 'honest':
      return ['honest'];
    case 'limbo':
    case 'wrap':
      return [behaviour.kind, String(behaviour.real)];
    case 'bad':
      return ['bad', String(behaviour.from), String(behaviour.to)];
    case 'flaky':
      return [behaviour.always ? 'flaky-always' : 'flaky-once', String(behaviour.at)];
  }
}

/** Bytes the card really stores: the store file's size. */
function storeSize(claimed: number, behaviour: FakeBehaviour): number {
  return behaviour.kind === 'limbo' || behaviour.kind === 'wrap' ? behaviour.real : claimed;
}

function isMounted(dir: string): boolean {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[4] === dir);
}

export interface FakeCardOptions {
  /** The real store starts as random bytes (default: zeros, sparse), so that "unchanged" means something. */
  random?: boolean;
  /** Every write takes this many milliseconds more: time for a test to interrupt a job. */
  writeDelayMs?: number;
}

/** Starts a fake card of `claimed` bytes that behaves as `behaviour`, and a loop device over it. */
export async function fakeCard(
  claimed: number,
  behaviour: FakeBehaviour,
  options: FakeCardOptions = {},
): Promise<FakeCard> {
  const dir = scratchDir();
  const store = join(dir, 'store');
  if (options.random === true) writeRandomFile(store, storeSize(claimed, behaviour));
  else execFileSync('truncate', ['-s', String(storeSize(claimed, behaviour)), store]);
  const mountpoint = mkdtempSync('/tmp/sluice-test-fuse-');
  const env = { ...process.env, SLUICE_FAKE_WRITE_DELAY_MS: String(options.writeDelayMs ?? 0) };
  const server = spawn(PYTHON, [SERVER, mountpoint, store, String(claimed), ...serverArgs(behaviour)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env,
  });
  let stderr = '';
  server.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  for (let tries = 0; !isMounted(mountpoint); tries++) {
    if (server.exitCode !== null || tries > 100) {
      server.kill();
      rmSync(mountpoint, { recursive: true, force: true });
      throw new Error(`the fake card did not mount: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const loop = attachLoop(join(mountpoint, 'card'));
  const card = { ...loop, claimed, behaviour, mountpoint, server, store };
  cards.push(card);
  return card;
}

/** Takes the card out of its reader: from now on every read and write of it fails with EIO. */
export function pullFakeCard(card: FakeCard): void {
  writeFileSync(`${card.store}.pulled`, '');
}

/** Detaches the card's loop device, unmounts its FUSE filesystem and waits for the server to exit. */
export async function removeFakeCard(card: FakeCard): Promise<void> {
  const at = cards.indexOf(card);
  if (at >= 0) cards.splice(at, 1);
  try {
    detachLoop(card.path);
  } catch {
    // detached already
  }
  const exited =
    card.server.exitCode !== null
      ? Promise.resolve()
      : new Promise<void>((done) => card.server.once('exit', () => done()));
  // The kernel may still hold the file for a moment after the detach: retry, then let go lazily.
  for (let tries = 0; isMounted(card.mountpoint); tries++) {
    try {
      execFileSync('fusermount', ['-u', ...(tries >= 20 ? ['-z'] : []), card.mountpoint], { stdio: 'ignore' });
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  await exited;
  rmSync(card.mountpoint, { recursive: true, force: true });
}

/** Removes every fake card this process started (describeDevices runs it after each suite). */
export async function removeFakeCards(): Promise<void> {
  for (const card of [...cards]) await removeFakeCard(card);
}
