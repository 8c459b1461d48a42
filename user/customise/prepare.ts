/**
 * Customisation's part of probing an image (user/images/probe/probe.ts): the method the image offers,
 * for `sluice info` and the app's Customise step, and, when settings are given, what each card
 * gets, ready for the helper. Runs in the probe process, which reads images as the user under a
 * memory cap and a time limit.
 */
import {
  MAX_OVERLAY_BYTES,
  type Customisation,
  type CustomisationSupport,
  type PreparedCustomisation,
} from '../../common/domain/customisation.js';
import { errorText } from '../../common/domain/error-details.js';
import { jobError, JobError } from '../../common/domain/failure.js';
import type { InitFormat } from '../../common/domain/catalogue.js';
import type { PartitionTable } from '../../common/domain/image.js';
import type { ImageAccess } from './detect.js';
import type { OverlayRange } from './plan.js';

/** Ranges that touch, merged, so that a file's clusters in a row travel and are written as one. */
function merged(ranges: readonly OverlayRange[]): OverlayRange[] {
  const out: OverlayRange[] = [];
  for (const range of ranges) {
    const last = out.at(-1);
    if (last !== undefined && last.offset + last.bytes.length === range.offset)
      out[out.length - 1] = { offset: last.offset, bytes: Buffer.concat([last.bytes, range.bytes]) };
    else out.push(range);
  }
  return out;
}

export interface ImageCustomisation {
  /** The method found and why; null when the image was not looked at. */
  support: CustomisationSupport | null;
  /** What each card gets, when settings were given. */
  prepared: PreparedCustomisation | null;
}

/**
 * Looks at the image `access` reads (null: not looked at) for its method (with a catalogue entry's
 * `initFormat`, see detect.ts) and, with `cards`, plans
 * what each gets. Without settings a boot partition that cannot be read is reported in words;
 * with them it refuses the flash, as anything else that stops the customisation does.
 *
 * The readers and planners (with the YAML library) load only when an image is looked at: they
 * were 18 ms of CPU in every probe process, most of which look at no boot partition.
 */
export async function customisationOf(
  access: ImageAccess | null,
  table: PartitionTable | null,
  cards: readonly Customisation[] | undefined,
  initFormat: InitFormat | null = null,
): Promise<ImageCustomisation> {
  if (access === null) return { support: null, prepared: null };
  const [{ detectMethod }, { planCustomisation }] = await Promise.all([import('./detect.js'), import('./plan.js')]);
  let detection;
  try {
    detection = await detectMethod(access, table, initFormat);
  } catch (error) {
    if (cards !== undefined) throw error;
    const why = error instanceof JobError ? error.message : errorText(error);
    return { support: { method: null, why: `The boot partition could not be read: ${why}` }, prepared: null };
  }
  const support = { method: detection.method, why: detection.why };
  if (cards === undefined) return { support, prepared: null };
  const plan = await planCustomisation(access, detection, cards);
  const overlays = plan.overlays.map((card) => merged(card));
  for (const card of overlays) {
    const bytes = card.reduce((sum, r) => sum + r.bytes.length, 0);
    if (bytes > MAX_OVERLAY_BYTES)
      throw jobError(
        'cannot-customise',
        `The customisation would write ${bytes} bytes onto each card, more than the ${MAX_OVERLAY_BYTES} Sluice allows; use smaller first-boot files. Nothing was written.`,
      );
  }
  return {
    support,
    prepared: {
      method: plan.method,
      why: plan.why,
      files: plan.files,
      overlays: overlays.map((card) => card.map((r): [number, string] => [r.offset, r.bytes.toString('base64')])),
    },
  };
}

/** A card's customisation as it travels ([offset, base64] ranges), as bytes to write. */
export function overlayPieces(card: readonly (readonly [number, string])[]): OverlayRange[] {
  return card.map(([offset, data]) => ({ offset, bytes: Buffer.from(data, 'base64') }));
}
