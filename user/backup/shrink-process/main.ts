/**
 * The shrinker: shrinks a raw backup's last filesystem (shrink.ts) away from the app and the CLI,
 * so that a card whose FAT or ext filesystem was shaped to make its readers run out of memory or
 * never finish takes only this process down (shrink-launch.ts gives it its memory cap and its
 * time). It runs with the user's rights, on the user's own file, and answers once (ShrinkReply).
 */
import * as v from 'valibot';
import { ShrinkRequest, type ShrinkReply } from '../../../common/contracts/shrink-protocol.js';
import { answerOnce } from '../../images/processes/image-child.js';
import { shrinkBackup } from '../shrink.js';

answerOnce(async (message): Promise<ShrinkReply> => {
  const request = v.parse(ShrinkRequest, message);
  const shrunk = await shrinkBackup(request.file, request.length);
  return shrunk === null ? { type: 'small' } : { type: 'shrunk', ...shrunk };
});
