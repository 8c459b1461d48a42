import { spawn } from 'node:child_process';
import { basename } from 'node:path';
import { customisationFor, isEmptyCustomisation, type Profile } from '../../common/domain/customisation.js';
import type { ImageRequest, PreparedImage } from '../images/probe/probe.js';
import type { DecoderOutput } from '../images/processes/decoder-launch.js';
import { invokingUser } from '../images/processes/image-child.js';
import { prepareImageInChild } from '../images/processes/probe-launch.js';
import type { HelperLaunchOptions, LaunchedHelper } from '../launcher/launch.js';

/** The image an armed station writes to every card, prepared once at arming. */
export interface StationImage {
  request: ImageRequest;
  /** The image as probed, without customisation: what a card gets when there is no profile. */
  prepared: PreparedImage;
  /**
   * Write every byte of the image (flash --exact, the app's "Write every byte"): no free space and
   * no block map left out, so no old data stays on a card.
   */
  exact: boolean;
  /** The customisation profile, its hostname a template with {n}; null for none. */
  profile: Profile | null;
  /** The image's file name, for the log. */
  name: string;
  /** The image file's SHA-256, for the log. */
  sha256: string;
  /** Starts one card's helper: startHelper with the front end's way of getting root (the app's, or the CLI's sudo/pkexec). */
  launch(options: HelperLaunchOptions): LaunchedHelper;
  /** How a card's decoder hands its image to that helper (user/launcher/transport.ts decoderOutputFor); 'stream' if absent. */
  decoderOutput?: DecoderOutput | undefined;
}

/** Hashes a file in a child process of this runtime with the invoking user's rights (image-child.ts). */
const HASH_SCRIPT = `const h=require('node:crypto').createHash('sha256');require('node:fs').createReadStream(process.argv[1]).on('data',(c)=>h.update(c)).on('error',(e)=>{console.error(e.message);process.exit(1)}).on('end',()=>console.log(h.digest('hex')))`;

/**
 * The SHA-256 of the image file, for every log line. Read as the person who asked, never as root
 * (under sudo, root opens no image path: see image-child.ts), in a child so a multi-GB image does
 * not hold this process's event loop for the seconds it takes.
 */
export function imageSha256(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', HASH_SCRIPT, path], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      ...invokingUser(),
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
    child.on('error', reject);
    child.on('close', (code) => {
      const hex = out.trim();
      if (code === 0 && /^[0-9a-f]{64}$/.test(hex)) resolve(hex);
      else reject(new Error(`cannot read ${path} to hash it: ${err.trim() || `exit code ${code ?? 'unknown'}`}`));
    });
  });
}

/** The image's name for the log. */
export function imageName(request: ImageRequest): string {
  return basename(request.image);
}

/**
 * The image as card number `n` gets it: with the profile's settings for that card (its hostname
 * from the {n} template) planned by the probe process, or as prepared at arming when there are none.
 */
export async function imageForCard(image: StationImage, n: number): Promise<PreparedImage> {
  const settings = image.profile === null ? null : customisationFor(image.profile, n);
  if (settings === null || isEmptyCustomisation(settings)) return image.prepared;
  return prepareImageInChild({ ...image.request, customise: [settings] });
}

/** The hostname card number `n` gets, or null. */
export function cardHostname(image: StationImage, n: number): string | null {
  return image.profile === null ? null : customisationFor(image.profile, n).hostname;
}
