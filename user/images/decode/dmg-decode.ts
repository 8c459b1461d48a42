import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { openDmg } from '../formats/dmg.js';
import { ReaderGone, type ImageSink } from './image-sink.js';
import { jobError, JobError } from '../../../common/domain/failure.js';
import { errorText } from '../../../common/domain/error-details.js';

/**
 * Decodes a dmg's blocks into the sink, and checks the data fork's CRC-32 (when the image records
 * one) in a second read alongside: zero-fill and raw blocks have no check of their own.
 */
export async function decodeDmg(path: string, sink: ImageSink): Promise<void> {
  const name = basename(path);
  const image = await openDmg(path, (await stat(path)).size, name);
  const checked = image.verifyData().catch((error: unknown) => {
    throw jobError('source-corrupt', `The dmg ${name} could not be checked: ${errorText(error)}.`);
  });
  checked.catch(() => undefined);
  try {
    await pipeline(Readable.from(await image.createReadStream()), sink);
  } catch (error) {
    if (error instanceof JobError || error instanceof ReaderGone) throw error;
    throw jobError(
      'source-corrupt',
      `The dmg ${name} is corrupt at image byte ${sink.position}: ${errorText(error)}.`,
      { offset: sink.position },
    );
  }
  if ((await checked) === false)
    throw jobError('source-corrupt', `The dmg ${name} is corrupt: its data does not match the CRC-32 it records.`);
}
