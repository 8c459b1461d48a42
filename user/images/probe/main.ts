/**
 * The probe process: reads what an image is (user/images/probe/probe.ts prepareImage) away from the app
 * and the CLI, so that an image whose parsing runs out of memory or never ends takes only this
 * process down (probe-launch.ts gives it its memory cap and its time). It runs with the user's
 * rights. The parent sends one ImageRequest over the IPC channel; this answers with exactly one
 * ProbeReply (common/contracts/probe-protocol.ts) and exits.
 */
import * as v from 'valibot';
import { ProbeRequest, type ProbeReply } from '../../../common/contracts/probe-protocol.js';
import { answerOnce } from '../processes/image-child.js';
import { prepareImage } from './probe.js';

answerOnce(async (message): Promise<ProbeReply> => ({
  type: 'prepared',
  prepared: await prepareImage(v.parse(ProbeRequest, message)),
}));
