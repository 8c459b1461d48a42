/**
 * Starts the privileged helper the way an installed Sluice does, without privileges and without
 * a device: it asks the helper to cancel a job it never started, and expects a refusal in words.
 * That proves the launcher finds the helper, that the binary runs it as Node (the RunAsNode fuse),
 * and that the helper's whole module graph loads from where the package put it (inside app.asar,
 * with the fuses flipped). Nothing is opened but the helper's own channel.
 *
 * Usage (release workflow, after `electron-builder --dir`): node out/build/scripts/probe-helper.js DIR
 * where DIR is the unpacked app electron-builder wrote (dist/linux-unpacked, dist/mac-arm64, ...).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { FromHelper, type ToHelper } from '../../worker/common/protocol.js';
import { Channel } from '../../worker/helper/channel.js';
import { HELPER_V8_FLAGS } from '../../worker/helper/launch.js';

/** The helper inside the package, relative to the app's resources folder. */
export const PACKAGED_HELPER_ENTRY = ['app.asar', 'out', 'worker', 'helper', 'main.js'] as const;

/** How long the helper may take to start and answer: Electron's start-up, not the job. */
const ANSWER_TIMEOUT_MS = 30_000;

/** What a probe saw: the helper's first message and how it exited. */
export interface ProbeResult {
  reply: FromHelper | null;
  exitCode: number | null;
}

export function probeHelper(command: string, args: readonly string[]): Promise<ProbeResult> {
  const child = spawn(command, args, {
    stdio: ['ignore', 'inherit', 'inherit', 'pipe'],
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
  });
  let reply: FromHelper | null = null;
  const channel = new Channel<FromHelper, ToHelper>(child.stdio[3] as Socket, FromHelper, {
    message: (message) => void (reply ??= message),
    error: () => undefined,
    close: () => undefined,
  });
  void channel.send({ type: 'cancel' });
  return new Promise((resolvePromise, rejectPromise) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rejectPromise(new Error(`${command} did not answer within ${ANSWER_TIMEOUT_MS / 1000} s`));
    }, ANSWER_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      rejectPromise(error);
    });
    child.on('exit', (exitCode) => {
      clearTimeout(timer);
      resolvePromise({ reply, exitCode });
    });
  });
}

/** The command that starts the helper inside an unpacked app that electron-builder wrote for this OS. */
export function packagedHelperCommand(appDir: string, productName: string, platform: NodeJS.Platform): { command: string; args: string[] } {
  switch (platform) {
    case 'linux':
      // Through the launcher pkexec runs, so the probe covers it too.
      return { command: join(appDir, 'sluice-helper'), args: [] };
    case 'darwin': {
      const contents = join(appDir, `${productName}.app`, 'Contents');
      return { command: join(contents, 'MacOS', productName), args: [...HELPER_V8_FLAGS, join(contents, 'Resources', ...PACKAGED_HELPER_ENTRY)] };
    }
    case 'win32':
      return { command: join(appDir, `${productName}.exe`), args: [...HELPER_V8_FLAGS, join(appDir, 'resources', ...PACKAGED_HELPER_ENTRY)] };
    default:
      throw new Error(`Sluice is not packaged for ${platform}.`);
  }
}

/** True when the helper refused the stray cancel the way worker/helper/main.ts does before any job. */
export function isRefusalBeforeStart(result: ProbeResult): boolean {
  return result.reply?.type === 'fatal' && result.reply.code === 'protocol-error' && result.exitCode === 2;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const appDir = process.argv[2];
  if (appDir === undefined) {
    process.stderr.write('usage: probe-helper.js UNPACKED_APP_DIR (e.g. dist/linux-unpacked)\n');
    process.exit(2);
  }
  const { productName } = parse(readFileSync(resolve('electron-builder.yml'), 'utf8')) as { productName: string };
  const { command, args } = packagedHelperCommand(resolve(appDir), productName, process.platform);
  const result = await probeHelper(command, args);
  if (!isRefusalBeforeStart(result)) {
    process.stderr.write(`The packaged helper did not answer as expected: ${JSON.stringify(result)}\n`);
    process.exit(1);
  }
  process.stdout.write(`packaged helper answered: ${JSON.stringify(result.reply)}\n`);
}
