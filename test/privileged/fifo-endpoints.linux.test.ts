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
  mkdtempSync,
  openSync,
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
});
