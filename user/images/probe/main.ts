/**
 * The probe process: reads what an image is (user/images/probe.ts prepareImage) away from the app
 * and the CLI, so that an image whose parsing runs out of memory or never ends takes only this
 * process down (probe-launch.ts gives it its memory cap and its time). It runs with the user's
 * rights. The parent sends one ImageRequest over the IPC channel; this answers with exactly one
 * ProbeReply (common/contracts/probe-protocol.ts) and exits.
 */
import * as v from 'valibot';
import { ProbeRequest, type ProbeReply } from '../../../common/contracts/probe-protocol.js';
import { toFailure } from '../../../common/domain/failure.js';
import { sendToParent } from '../image-child.js';
import { prepareImage } from '../probe.js';

const send: (reply: ProbeReply) => Promise<void> = sendToParent;

async function run(message: unknown): Promise<void> {
  let reply: ProbeReply;
  try {
    reply = { type: 'prepared', prepared: await prepareImage(v.parse(ProbeRequest, message)) };
  } catch (error) {
    reply = { type: 'failed', ...toFailure(error) };
  }
  await send(reply);
  process.exit(0);
}

// Ctrl-C in a terminal reaches the whole process group; the parent decides what it means.
// Without the parent there is no one to probe for.
process.on('SIGINT', () => undefined);
process.on('disconnect', () => process.exit(0));
process.once('message', (message: unknown) => void run(message));
