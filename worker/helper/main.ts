/**
 * The privileged helper: runs exactly one flash job and exits.
 *
 * fd 0   image bytes: the image file itself, or a pipe from the unprivileged decoder. The helper
 *        opens no image path; it never parses an archive as root.
 * fd 3   the control channel to its parent: framed, schema-checked messages (see
 *        worker/common/protocol.ts). The helper only ever talks to the parent that started it;
 *        it binds and listens on nothing.
 *
 * The only paths it opens are the target devices, and only after the engine's own fresh checks.
 */
import { Socket } from 'node:net';
import { ToHelper, type FromHelper, type StartMessage } from '../common/protocol.js';
import { flash } from '../engine/flash.js';
import { Channel, type ProtocolError } from './channel.js';

const IMAGE_FD = 0;
const CONTROL_FD = 3;

async function finish(channel: Channel<ToHelper, FromHelper>, message: FromHelper, exitCode: number): Promise<never> {
  await channel.send(message);
  channel.close();
  process.exit(exitCode);
}

function main(): void {
  // A terminal's Ctrl-C reaches the whole process group. The parent decides what it means and
  // says so with a cancel message; dying here would leave the device without a clean stop.
  process.on('SIGINT', () => undefined);

  const controller = new AbortController();
  let job: StartMessage | null = null;

  const run = async (start: StartMessage) => {
    const results = await flash({
      source: IMAGE_FD,
      imageSize: start.imageSize,
      sourceSeekable: start.sourceSeekable,
      targets: start.targets,
      verify: start.verify,
      eject: start.eject === true,
      signal: controller.signal,
      onProgress: (p) => void channel.send({ type: 'progress', ...p }),
    });
    await finish(channel, { type: 'result', results }, 0);
  };

  const reject = (error: ProtocolError) => {
    if (job === null) {
      // Nothing has been opened yet, let alone written.
      void finish(channel, { type: 'fatal', code: 'protocol-error', message: `The helper refused its instructions: ${error.message}` }, 2);
    } else {
      void channel.send({ type: 'log', level: 'warn', message: `stopping: ${error.message}` });
      controller.abort();
    }
  };

  const channel: Channel<ToHelper, FromHelper> = new Channel(new Socket({ fd: CONTROL_FD, readable: true, writable: true }), ToHelper, {
    message: (message) => {
      if (message.type === 'start') {
        if (job !== null) return reject(new Error('a second start message') as ProtocolError);
        job = message;
        void run(message);
      } else if (job === null) {
        reject(new Error('cancel before start') as ProtocolError);
      } else {
        controller.abort();
      }
    },
    error: reject,
    // The parent is gone (it exited or was killed): stop at the next block, close the device, exit.
    close: () => {
      controller.abort();
      if (job === null) process.exit(3);
    },
  });
}

main();
