/**
 * Starts the privileged helper of a packaged app through its launcher (resources/sluice-helper, or
 * sluice-helper.cmd on Windows), as the app does, but without privileges and without a device: it
 * asks the helper to cancel a job it never started, and expects a refusal in words. That proves
 * the launcher finds the app binary, that the binary runs the helper as Node (the RunAsNode fuse,
 * with the other fuses flipped), and that the helper's whole module graph loads from
 * app.asar.unpacked. Nothing is opened but the helper's own channel; the target on its command
 * line is never touched (the helper opens targets only for a job message, and gets none).
 *
 * Usage (release workflow, after `npm run dist`): node out/build/scripts/probe-helper.js DIR
 * where DIR is the unpacked app electron-builder wrote (dist/linux-unpacked, dist/mac-arm64, ...).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { FromHelper, type ToHelper } from '../../common/contracts/helper-protocol.js';
import { Channel, type ChannelStreams } from '../../node/channel.js';
import { windowsArg } from '../../user/launcher/elevation/uac.js';
import { helperArgv } from '../../node/helper-command-line.js';
import { packagedHelperProgram } from '../../user/launcher/helper-program.js';
import { createPipeServers, newPipeName } from '../../user/launcher/pipe-servers.js';

/** How long the helper may take to start and answer: the runtime's start-up, not a job. */
const ANSWER_TIMEOUT_MS = 30_000;
/** Named on the helper's command line because it requires a target; never opened. */
const PROBE_TARGET = 'sluice-probe-no-drive';

/** What a probe saw: every message from the helper, how it exited, and what it wrote to stderr. */
export interface ProbeResult {
  messages: FromHelper[];
  exitCode: number | null;
  stderr: string;
}

/**
 * The launcher started with the transport the app gives it on this OS, minus the elevation tool:
 * on Linux and macOS the helper's channel is an inherited socket on fd 3 (as when the app runs as
 * root; `sh` keeps it across the launcher's exec); on Windows, where cmd.exe would not pass it on,
 * the named pipes the app uses with UAC.
 */
function startLauncher(
  resourcesPath: string,
  platform: NodeJS.Platform,
): { child: ChildProcess; streams: Promise<ChannelStreams | null>; close(): void } {
  const launcher = packagedHelperProgram(resourcesPath, platform).file;
  if (platform === 'win32') {
    const name = newPipeName();
    const pipes = createPipeServers(name, false);
    const argv = helperArgv({
      transport: { kind: 'named-pipe', name },
      parentPid: null,
      targets: [PROBE_TARGET],
      source: null,
    });
    // A .cmd runs only through cmd.exe; shell: true is Node's `cmd.exe /d /s /c "…"`.
    const child = spawn([launcher, ...argv].map(windowsArg).join(' '), {
      shell: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    return { child, streams: pipes.control, close: () => pipes.close() };
  }
  const argv = helperArgv({ transport: { kind: 'inherited' }, parentPid: null, targets: [PROBE_TARGET], source: null });
  const child = spawn(launcher, argv, { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  const socket = child.stdio[3] as Socket;
  return { child, streams: Promise.resolve({ input: socket, output: socket }), close: () => undefined };
}

export function probePackagedHelper(
  resourcesPath: string,
  platform: NodeJS.Platform = process.platform,
): Promise<ProbeResult> {
  const { child, streams, close } = startLauncher(resourcesPath, platform);
  const messages: FromHelper[] = [];
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  void streams.then((connected) => {
    if (connected === null) return;
    const channel = new Channel<FromHelper, ToHelper>(connected, FromHelper, {
      message: (message) => void messages.push(message),
      error: (error) => void (stderr += `probe: ${error.message}\n`),
      close: () => undefined,
    });
    void channel.send({ type: 'cancel' });
  });
  return new Promise((resolvePromise, rejectPromise) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      close();
      rejectPromise(
        new Error(`the packaged helper did not answer within ${ANSWER_TIMEOUT_MS / 1000} s; stderr: ${stderr}`),
      );
    }, ANSWER_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      close();
      rejectPromise(error);
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      close();
      resolvePromise({ messages, exitCode, stderr });
    });
  });
}

/**
 * True when the helper said it was ready and then refused the stray cancel, as privileged/main.ts
 * does before any job, and exited by itself with a failure code.
 */
export function isRefusalBeforeStart(result: ProbeResult): boolean {
  const [ready, refusal, ...rest] = result.messages;
  return (
    ready?.type === 'ready' &&
    refusal?.type === 'fatal' &&
    refusal.code === 'protocol-error' &&
    refusal.message.includes('cancel before start') &&
    rest.length === 0 &&
    result.exitCode !== null &&
    result.exitCode !== 0
  );
}

/** The resources folder inside an unpacked app that electron-builder wrote for `platform`. */
export function packagedResourcesPath(appDir: string, productName: string, platform: NodeJS.Platform): string {
  switch (platform) {
    case 'darwin':
      return join(appDir, `${productName}.app`, 'Contents', 'Resources');
    case 'linux':
    case 'win32':
      return join(appDir, 'resources');
    default:
      throw new Error(`Sluice is not packaged for ${platform}.`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const appDir = process.argv[2];
  if (appDir === undefined) {
    process.stderr.write('usage: probe-helper.js UNPACKED_APP_DIR (e.g. dist/linux-unpacked)\n');
    process.exit(2);
  }
  const { productName } = parse(readFileSync(resolve('electron-builder.yml'), 'utf8')) as { productName: string };
  const result = await probePackagedHelper(packagedResourcesPath(resolve(appDir), productName, process.platform));
  if (!isRefusalBeforeStart(result)) {
    process.stderr.write(`The packaged helper did not answer as expected: ${JSON.stringify(result)}\n`);
    process.exit(1);
  }
  process.stdout.write(`packaged helper answered: ${JSON.stringify(result.messages)}\n`);
}
