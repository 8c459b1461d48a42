/**
 * The checks that let a root helper open its channel FIFOs safely: anything in the channel
 * directory that is not a private FIFO of the user who asked for root is refused before it is
 * opened for a single byte. Real files, FIFOs, symlinks and owners (chown needs root).
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  constants,
  fstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ChannelPathError,
  checkChannelDir,
  openChannelFifo,
  openHelperFifos,
} from '../../privileged/fifo-endpoints.js';
import { isRoot } from '../support/loop-device.js';
import { ensureTestUser } from '../support/unprivileged.js';
import { threadsInFifoOpen } from '../support/processes.js';
import type { HelperEndpoints } from '../../privileged/endpoints.js';

describe.skipIf(!isRoot)('opening the channel FIFOs as root', () => {
  let dir: string;
  let user: { uid: number; gid: number };
  const savedEnv = { SUDO_UID: process.env['SUDO_UID'], PKEXEC_UID: process.env['PKEXEC_UID'] };

  /** A FIFO (or other entry) in the channel directory, owned by `uid` with `mode`. */
  function fifo(name: string, uid = user.uid, mode = 0o600): string {
    const path = join(dir, name);
    execFileSync('mkfifo', ['-m', mode.toString(8), path]);
    chownSync(path, uid, user.gid);
    return path;
  }

  beforeEach(() => {
    user = ensureTestUser();
    dir = mkdtempSync('/tmp/sluice-test-channel-');
    chownSync(dir, user.uid, user.gid);
    delete process.env['PKEXEC_UID'];
    process.env['SUDO_UID'] = String(user.uid);
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    for (const [key, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it('opens the FIFOs of a private directory of the user who asked for root', async () => {
    fifo('to-helper');
    fifo('from-helper');
    // The app's side holds both ends read-write, as channel-dir.ts does.
    const holders = ['to-helper', 'from-helper'].map((name) => openSync(join(dir, name), constants.O_RDWR));
    try {
      const endpoints = await openHelperFifos(dir, false);
      expect(await endpoints.image()).toBe(0);
      endpoints.input.destroy();
      endpoints.output.destroy();
    } finally {
      holders.forEach(closeSync);
    }
  });

  it('refuses a directory someone else can open, one owned by root, one of another user, or a symlink', async () => {
    chmodSync(dir, 0o755);
    await expect(checkChannelDir(dir)).rejects.toThrow(/other users/);
    chmodSync(dir, 0o700);
    process.env['SUDO_UID'] = String(user.uid + 1);
    await expect(checkChannelDir(dir)).rejects.toThrow(/asked for root/);
    process.env['SUDO_UID'] = String(user.uid);
    chownSync(dir, 0, 0);
    await expect(checkChannelDir(dir)).rejects.toThrow(/belongs to root/);
    chownSync(dir, user.uid, user.gid);
    const link = `${dir}-link`;
    symlinkSync(dir, link);
    try {
      await expect(checkChannelDir(link)).rejects.toThrow(/not a directory/);
    } finally {
      rmSync(link);
    }
    expect(await checkChannelDir(dir)).toBe(user.uid);
  });

  it('refuses, without opening it, a regular file, a symlink to a file, a device node, a root-owned or shared FIFO', async () => {
    const secret = join(dir, 'secret');
    writeFileSync(secret, 'root:$y$…');
    chownSync(secret, user.uid, user.gid);
    chmodSync(secret, 0o600);
    symlinkSync('/etc/shadow', join(dir, 'shadow-link'));
    symlinkSync(fifo('real-fifo'), join(dir, 'fifo-link'));
    fifo('root-fifo', 0);
    fifo('shared-fifo', user.uid, 0o666);
    execFileSync('mknod', ['-m', '600', join(dir, 'null-device'), 'c', '1', '3']);
    chownSync(join(dir, 'null-device'), user.uid, user.gid);

    const refused: [string, RegExp][] = [
      ['secret', /not a FIFO/],
      ['shadow-link', /not a FIFO/],
      ['fifo-link', /not a FIFO/],
      ['null-device', /not a FIFO/],
      ['root-fifo', /belongs to uid 0/],
      ['shared-fifo', /other users/],
      ['missing', /ENOENT/],
    ];
    for (const [name, reason] of refused) {
      await expect(
        openChannelFifo(dir, name, user.uid, constants.O_RDONLY | constants.O_NONBLOCK),
        name,
      ).rejects.toThrow(ChannelPathError);
      await expect(
        openChannelFifo(dir, name, user.uid, constants.O_RDONLY | constants.O_NONBLOCK),
        name,
      ).rejects.toThrow(reason);
    }
    // And the real FIFO opens.
    closeSync(await openChannelFifo(dir, 'real-fifo', user.uid, constants.O_RDONLY | constants.O_NONBLOCK));
  });

  /** This process's open descriptors. */
  const openFds = () => readdirSync('/proc/self/fd').length;

  /** The helper's endpoints with an image FIFO, its app's side holding both control FIFOs as channel-dir.ts does; `end` undoes it. */
  async function withImageFifo(): Promise<{ endpoints: HelperEndpoints; end: () => void }> {
    for (const name of ['to-helper', 'from-helper', 'image']) fifo(name);
    const holders = ['to-helper', 'from-helper'].map((name) => openSync(join(dir, name), constants.O_RDWR));
    const endpoints = await openHelperFifos(dir, true);
    return {
      endpoints,
      end: () => {
        endpoints.input.destroy();
        endpoints.output.destroy();
        holders.forEach(closeSync);
      },
    };
  }

  const directions = { image: 'read', driveOut: 'write' } as const;

  /** Starts the image FIFO's open one way, and resolves once a thread of the pool waits in the kernel for the app's end: what the open settles with, as text. */
  async function pendingOpen(
    endpoints: HelperEndpoints,
    direction: keyof typeof directions,
  ): Promise<{ settled: Promise<string> }> {
    const waiting = threadsInFifoOpen('self');
    const settled = endpoints[direction]().then(
      (fd) => `opened ${String(fd)}`,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    await expect.poll(() => threadsInFifoOpen('self'), { interval: 20 }).toBe(waiting + 1);
    // Wrapped: an async function returning the promise itself would wait for it to settle.
    return { settled };
  }

  for (const direction of ['image', 'driveOut'] as const)
    it(`an image FIFO the app never opens (${directions[direction]}): releasing it ends the waiting open, its thread returns and no descriptor is left`, async () => {
      // Fresh endpoints for each direction: once released, they call off any later open before it starts.
      const { endpoints, end } = await withImageFifo();
      try {
        const before = openFds();
        const { settled } = await pendingOpen(endpoints, direction);
        expect(await endpoints.releaseImage()).toBe(true);
        // Settled only once the pool's thread has come back from open(2).
        expect(await settled).toBe('the job ended before the app opened the image stream');
        expect(threadsInFifoOpen('self')).toBe(0);
        expect(openFds()).toBe(before);
      } finally {
        end();
      }
    });

  /** Linux's O_PATH (Node has no constant for it): a descriptor that names an inode without opening either end of a FIFO. */
  const O_PATH = 0o10000000;

  for (const [direction, how] of [
    ['image', 'removed'],
    ['image', 'replaced'],
    ['driveOut', 'replaced'],
  ] as const)
    it(`an image FIFO ${how} while its open waits (${directions[direction]}): releasing it still ends the open, through the inode it holds`, async () => {
      const { endpoints, end } = await withImageFifo();
      // The FIFO's inode, held by this test too: answers the open if the release fails to, so no thread stays blocked.
      const inode = openSync(join(dir, 'image'), O_PATH);
      try {
        const before = openFds();
        const { settled } = await pendingOpen(endpoints, direction);
        rmSync(join(dir, 'image'));
        if (how === 'replaced') fifo('image');
        expect(await endpoints.releaseImage()).toBe(true);
        expect(await settled).toBe('the job ended before the app opened the image stream');
        expect(threadsInFifoOpen('self')).toBe(0);
        expect(openFds()).toBe(before);
      } finally {
        // A read-write open of a FIFO waits for nobody and counts as both ends: any open still waiting returns.
        closeSync(openSync(`/proc/self/fd/${inode}`, constants.O_RDWR));
        closeSync(inode);
        end();
      }
    });

  it('an image FIFO the app opened: releasing it closes the descriptor the job read from', async () => {
    const { endpoints, end } = await withImageFifo();
    try {
      const before = openFds();
      const { settled } = await pendingOpen(endpoints, 'image');
      const writer = openSync(join(dir, 'image'), constants.O_WRONLY | constants.O_NONBLOCK);
      const opened = await settled;
      closeSync(writer);
      expect(opened).toMatch(/^opened \d+$/);
      expect(openFds()).toBe(before + 1);
      expect(await endpoints.releaseImage()).toBe(true);
      expect(openFds()).toBe(before);
      expect(() => fstatSync(Number(opened.slice('opened '.length)))).toThrow(/EBADF/);
    } finally {
      end();
    }
  });
});
