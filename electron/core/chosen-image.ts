import { basename } from 'node:path';
import { ok, refuse, refused, type ApiResult } from '../../common/contracts/api-result.js';
import type { FlashRequest } from '../../common/contracts/app-models.js';
import { cutShortFailure } from '../../common/domain/cut-short.js';
import { JobError } from '../../common/domain/failure.js';
import type { ImageInfo } from '../../common/domain/image.js';
import { sameFile } from '../../user/images/probe/probed-file.js';
import { fileIdentity, type ProbedImage } from './image-probe.js';
import type { JobRunner } from './job-runner.js';

/** The image the user chose: what the drives are judged against, and what a flash writes. */
export class ChosenImage {
  private probed: ProbedImage | null = null;

  constructor(
    private readonly runner: JobRunner,
    /** The drives' verdicts depend on the image: called whenever it changes. */
    private readonly changed: () => void,
  ) {}

  get current(): ProbedImage | null {
    return this.probed;
  }

  /** Chooses the image `probe` finds at `where` (a path, a URL, a drive). */
  async choose(where: string, probe: (where: string) => Promise<ProbedImage>): Promise<ApiResult<ImageInfo>> {
    // Refused, not queued for later: the image under a running flash never changes, and one that
    // appeared once the flash ended would be what "Flash another drive" writes, unlike what the screen showed.
    const running = this.runner.running();
    if (running !== null) {
      const why =
        running === 'backup'
          ? 'a backup is running. Open it again when the backup has ended.'
          : 'a flash is running, and Sluice never changes the image under it. Open it again when the flash has ended.';
      return refuse('busy', `${basename(where)} was not opened: ${why}`);
    }
    let probed: ProbedImage;
    try {
      probed = await probe(where);
    } catch (error) {
      if (error instanceof JobError) return refused(error.failure);
      throw error;
    }
    // The app has no "write it anyway": a cut-short image is refused here, where the image step
    // shows why, and no drive is ever offered for it.
    const cutShort = cutShortFailure(probed.info);
    if (cutShort !== null) return refused(cutShort);
    this.probed = probed;
    this.changed();
    return ok(this.probed.info);
  }

  clear(): ApiResult<null> {
    const busy = this.runner.busy();
    if (busy !== null) return busy;
    this.probed = null;
    this.changed();
    return ok(null);
  }

  /** The chosen image, if it is `image` (the source the page shows) and no job runs. */
  forFlash(image: FlashRequest['image']): ApiResult<ProbedImage> {
    const chosen = this.probed;
    if (chosen === null) return refuse('no-image', 'Choose an image first.');
    const busy = this.runner.busy();
    if (busy !== null) return busy;
    if (chosen.info.source !== image)
      return refuse('no-image', 'Choose the image again: it is not the one Sluice has open.');
    return ok(chosen);
  }

  /** A local file must still be the file that was probed: a flash writes what the screen showed. */
  async unchanged(chosen: ProbedImage): Promise<ApiResult<null>> {
    if (chosen.local === null) return ok(null);
    const now = await fileIdentity(chosen.info.source).catch(() => null);
    if (now === null)
      return refuse(
        'source-not-found',
        `${chosen.info.name} is no longer where it was chosen (${chosen.info.source}). Choose it again.`,
      );
    if (!sameFile(chosen.local.identity, now))
      return refuse(
        'image-changed',
        `${chosen.info.name} changed on disk after it was chosen. Choose it again to check it.`,
      );
    return ok(null);
  }
}
