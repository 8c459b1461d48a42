/**
 * The processes that read images (the decoder, decode/main.ts, and the probe, probe/main.ts):
 * this very runtime in Node mode on an entry next to this file, with an IPC channel to the parent,
 * and with the rights of the person who asked. Both ends' small pieces are here.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { toFailure } from '../../../common/domain/failure.js';

/**
 * The user sudo ran Sluice for, when Sluice is root because of sudo (`sudo sluice flash img.xz
 * /dev/sdb`): the image is still opened, parsed and decoded as that user, so a hostile image
 * meets the same walls it would without sudo, and a file that user may not read stays unread.
 * Null when not root, or root on its own (a root login: there is nobody else to be).
 */
export function invokingUser(env: NodeJS.ProcessEnv = process.env): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const uid = Number(env['SUDO_UID']);
  const gid = Number(env['SUDO_GID']);
  if (!Number.isSafeInteger(uid) || !Number.isSafeInteger(gid) || uid <= 0 || gid < 0) return null;
  return { uid, gid };
}

/**
 * Starts `entry` with `v8Flags` as the invoking user (see invokingUser). Node clears the
 * supplementary groups when it changes the ids and has no way to set the user's own, so an image
 * that user may read only through another of their groups is refused, as root's groups must not
 * be kept. The environment is passed on as it is: neither child reads anything under HOME, so
 * sudo's HOME (root's, or the user's) does not matter to them.
 */
export function spawnImageChild(
  entry: string,
  v8Flags: readonly string[],
  args: readonly string[],
  stdio: StdioOptions,
): ChildProcess {
  // Inside Electron, process.execPath is the app binary; ELECTRON_RUN_AS_NODE makes it plain Node.
  return spawn(process.execPath, [...v8Flags, entry, ...args], {
    stdio,
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    ...invokingUser(),
  });
}

/** Child side: sends `message` to the parent; resolves once it is handed over (or there is no parent). */
export function sendToParent(message: object): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined || !process.connected) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });
}

/**
 * Child side of a process that answers one question (the probe, the catalogue reader): takes the
 * parent's one message, answers with what `answer` makes of it, or with the failure it threw
 * (`{ type: 'failed', ...Failure }`), and exits.
 */
export function answerOnce(answer: (message: unknown) => Promise<object>): void {
  const run = async (message: unknown) => {
    let reply: object;
    try {
      reply = await answer(message);
    } catch (error) {
      reply = { type: 'failed', ...toFailure(error) };
    }
    await sendToParent(reply);
    process.exit(0);
  };
  // Ctrl-C in a terminal reaches the whole process group; the parent decides what it means.
  // Without the parent there is no one to answer.
  process.on('SIGINT', () => undefined);
  process.on('disconnect', () => process.exit(0));
  process.once('message', (message: unknown) => void run(message));
}
