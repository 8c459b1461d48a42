/**
 * The drive map reader: reads a drive's partition table and its filesystems' maps (used-blocks.ts
 * usedRanges) away from the app and the CLI, so that a card whose filesystems were shaped to make
 * the readers run out of memory or never finish takes only this process down (drive-map-launch.ts
 * gives it its memory cap and its time). It runs with the user's rights and opens nothing: it asks
 * the parent for every range of the drive it reads (DriveMapQuestion), one at a time, and answers
 * with exactly one DriveMapReply (common/contracts/drive-map-protocol.ts), then exits.
 */
import * as v from 'valibot';
import {
  DriveMapBytes,
  DriveMapRequest,
  type DriveMapQuestion,
  type DriveMapReply,
} from '../../../common/contracts/drive-map-protocol.js';
import { answerOnce, sendToParent } from '../../images/processes/image-child.js';
import type { ReadImage } from '../../images/free-space/image-reader.js';
import { usedRanges } from './used-ranges.js';

/** The drive's bytes, asked of the parent: the readers ask one question at a time and wait for it. */
const readThroughParent: ReadImage = (offset, length) =>
  new Promise((resolve, reject) => {
    process.once('message', (message: unknown) => {
      const reply = v.safeParse(DriveMapBytes, message);
      if (!reply.success) return reject(new Error('the parent sent something other than the bytes asked for'));
      const { base64 } = reply.output;
      const bytes = base64 === null ? null : Buffer.from(base64, 'base64');
      resolve(bytes === null ? null : bytes.subarray(0, length));
    });
    const question: DriveMapQuestion = { type: 'read', offset, length };
    void sendToParent(question);
  });

answerOnce(async (message): Promise<DriveMapReply> => {
  const request = v.parse(DriveMapRequest, message);
  const used = await usedRanges(readThroughParent, request.length);
  return { type: 'used', ranges: used.map(([offset, length]): [number, number] => [offset, length]) };
});
