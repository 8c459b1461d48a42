/**
 * What customising an image writes onto each card, decided before anything is written.
 *
 * Design: Root never parses an image's filesystems, and this design keeps that rule with raw block
 * writes, in the form that needs no reads from the card: the unprivileged side (this module, in
 * the probe process) reads the boot partition from the image itself, plans the new files into its
 * FAT, and hands the helper only byte ranges, one list per card. The helper writes them after the
 * image is written and verified, syncs, reads them back with direct I/O and compares
 * (writer/overlay.ts): a customised card that reports success holds its customisation. Why this
 * and not a patch of the decoded stream:
 * - Each card gets its own files: pi-{n} names the cards of one multi-card flash pi-1, pi-2, ...,
 *   which one stream written to all of them cannot do.
 * - The image stream stays as it is: a raw image is still read by the helper directly, a system
 *   xz still writes straight into the helper's pipe, and a block map (or free-space skipping) needs
 *   no exceptions for the clusters customisation allocates, since they are written on their own.
 * - The stream patch would have to know cmdline.txt's content before the stream reaches the root
 *   directory that records its new size, which the stream only brings later.
 * The cost is a second write of a few KiB per card, measured in the README's Customise section.
 */
import type { Customisation, CustomisationMethod } from '../../common/domain/customisation.js';
import { jobError } from '../../common/domain/failure.js';
import { metaData, networkConfig, userData } from './cloud-init.js';
import { cmdlineProblem, withArguments } from './cmdline.js';
import type { Detection, ImageAccess } from './detect.js';
import { FatEditor, type FatWrite, type NewFile } from './fat.js';
import type { ReadAt } from '../../node/read-at.js';
import { firstRunArguments, firstRunScript } from './firstrun.js';
import { preseedToml } from './preseed.js';

/** Bytes of the image to write onto one card after the image: its offset in the image, and the bytes. */
export interface OverlayRange {
  offset: number;
  bytes: Buffer;
}

/** What customisation writes onto each card. */
export interface CustomisationPlan {
  method: CustomisationMethod;
  why: string;
  /** Per card: the boot partition's files it writes, with their sizes. */
  files: { name: string; size: number }[][];
  /** Per card: the byte ranges to write after the image, in order. */
  overlays: OverlayRange[][];
}

/** The arguments that make the Wi-Fi regulatory domain right from the first boot, as Imager adds them. */
function regulatoryArguments(c: Customisation): string[] {
  return c.wifi === null ? [] : [`cfg80211.ieee80211_regdom=${c.wifi.country}`];
}

/** The files `method` needs for `c`, given the boot partition's cmdline.txt (null when it has none). */
function filesFor(
  method: CustomisationMethod,
  c: Customisation,
  detection: Detection,
  cmdline: string | null,
): NewFile[] {
  const file = (name: string, text: string): NewFile => ({ name, bytes: Buffer.from(text, 'utf8') });
  const needCmdline = (): string => {
    if (cmdline === null)
      throw jobError(
        'cannot-customise',
        `The boot partition has no cmdline.txt, which ${method} needs here. Nothing was written.`,
      );
    return cmdline;
  };
  switch (method) {
    case 'systemd-firstrun':
      return [
        file('firstrun.sh', c.firstRunScript ?? firstRunScript(c)),
        file('cmdline.txt', withArguments(needCmdline(), [...regulatoryArguments(c), ...firstRunArguments()])),
      ];
    case 'cloud-init': {
      const user = userData(c);
      const network = networkConfig(c);
      const files = [file('user-data', user), file('meta-data', metaData(c, user, network))];
      if (network !== null) files.push(file('network-config', network));
      if (detection.seedOnCommandLine)
        files.push(file('cmdline.txt', withArguments(needCmdline(), [`ds=nocloud;s=file://${detection.bootDir}/`])));
      return files;
    }
    case 'rpi-preseed':
      return [file('rpi-preseed.toml', preseedToml(c))];
  }
}

/** Settings that only one method can take, refused for the others. */
function refuseForeignFiles(method: CustomisationMethod, c: Customisation): void {
  if (c.growRoot === true && (method === 'rpi-preseed' || c.firstRunScript !== null || c.cloudInitUserData !== null))
    throw jobError(
      'cannot-customise',
      method === 'rpi-preseed'
        ? 'Growing the root filesystem on the first boot (--grow-root) is written as a cloud-init or firstrun.sh step; this image takes rpi-preseed, which has none. Grow it on the card (growpart, resize2fs). Nothing was written.'
        : 'Growing the root filesystem on the first boot (--grow-root) is a step of the first-boot file Sluice writes, not of one you give: add it to yours instead. Nothing was written.',
    );
  if (c.firstRunScript !== null && method !== 'systemd-firstrun')
    throw jobError(
      'cannot-customise',
      `A first-run script (--first-run-script) needs an image that runs firstrun.sh (systemd firstrun); this image takes ${method}. Nothing was written.`,
    );
  if ((c.cloudInitUserData !== null || c.cloudInitNetworkConfig !== null) && method !== 'cloud-init') {
    throw jobError(
      'cannot-customise',
      `cloud-init files (--cloudinit-userdata, --cloudinit-networkconfig) need an image that runs cloud-init; this image takes ${method}. Nothing was written.`,
    );
  }
}

/** A ReadAt that reads each range of the image once: every card's plan reads the same boot partition. */
function remembering(access: ImageAccess): ImageAccess {
  const seen = new Map<string, Promise<Buffer>>();
  return {
    random: access.random,
    readAt: (offset, length) => {
      const key = `${offset}:${length}`;
      let read = seen.get(key);
      if (read === undefined) {
        read = access.readAt(offset, length);
        seen.set(key, read);
      }
      return read;
    },
  };
}

/** `readAt` with `writes` (offsets from `base`) laid over it: the card as it will be after the plan. */
function overlaid(readAt: ReadAt, base: number, writes: readonly FatWrite[]): ReadAt {
  return async (offset, length) => {
    const covering = writes.find(
      (w) => base + w.offset <= offset && offset + length <= base + w.offset + w.bytes.length,
    );
    // A range the plan writes whole (a new cluster) needs no read of the image, which a decoder would have to seek to.
    if (covering !== undefined)
      return Buffer.from(
        covering.bytes.subarray(offset - base - covering.offset, offset - base - covering.offset + length),
      );
    const bytes = Buffer.from(await readAt(offset, length));
    for (const w of writes) {
      const from = Math.max(offset, base + w.offset);
      const to = Math.min(offset + bytes.length, base + w.offset + w.bytes.length);
      if (from < to) w.bytes.copy(bytes, from - offset, from - base - w.offset, to - base - w.offset);
    }
    return bytes;
  };
}

/** The boot partition's cmdline.txt, refused when what was read is not a command line (a read gone wrong, or a damaged file). */
async function readCmdline(fat: FatEditor): Promise<string | null> {
  const bytes = await fat.readFile('cmdline.txt');
  if (bytes === null) return null;
  const problem = cmdlineProblem(bytes);
  if (problem !== null)
    throw jobError(
      'cannot-customise',
      `cmdline.txt on the boot partition does not read as a kernel command line: ${problem}. Sluice does not rewrite it. Nothing was written.`,
    );
  return bytes.toString('utf8');
}

/**
 * Reads the rewritten files back from the card as the plan leaves it (the image with `writes` over
 * it), through the FAT as any reader finds them, and refuses the plan unless each holds exactly
 * what was planned: cmdline.txt, which the card cannot boot without, above all.
 */
async function checkRewrite(
  readAt: ReadAt,
  boot: { offset: number; size: number },
  writes: readonly FatWrite[],
  files: readonly NewFile[],
): Promise<void> {
  const card = await FatEditor.open(overlaid(readAt, boot.offset, writes), boot.offset, boot.size);
  for (const file of files) {
    const got = await card?.readFile(file.name);
    if (got === undefined || got === null || !got.equals(file.bytes))
      throw jobError(
        'internal',
        `Planning the customisation went wrong: ${file.name} would not hold what was planned when read back from the card. Nothing was written.`,
      );
  }
}

/**
 * The plan for writing `cards` (one customisation per card, in target order) onto the image
 * `access` reads. Throws cannot-customise, before anything is written, when the image has no
 * method, its boot partition no room, or the settings do not fit its method.
 */
export async function planCustomisation(
  access: ImageAccess,
  detection: Detection,
  cards: readonly Customisation[],
): Promise<CustomisationPlan> {
  const { method, boot } = detection;
  if (method === null || boot === null)
    throw jobError(
      'cannot-customise',
      `This image cannot be customised: ${detection.why} Write it without customisation settings, or choose another image. Nothing was written.`,
    );
  const reader = remembering(access);
  const files: CustomisationPlan['files'] = [];
  const overlays: OverlayRange[][] = [];
  for (const c of cards) {
    refuseForeignFiles(method, c);
    const fat = await FatEditor.open(reader.readAt, boot.offset, boot.size);
    if (fat === null)
      throw jobError('cannot-customise', `Partition ${boot.number} is no longer a FAT volume. Nothing was written.`);
    const cardFiles = filesFor(method, c, detection, await readCmdline(fat));
    fat.writeFiles(cardFiles, 'cmdline.txt');
    const writes = fat.writes();
    await checkRewrite(reader.readAt, boot, writes, cardFiles);
    files.push(cardFiles.map((f) => ({ name: f.name, size: f.bytes.length })));
    overlays.push(writes.map((w) => ({ offset: boot.offset + w.offset, bytes: w.bytes })));
  }
  return { method, why: detection.why, files, overlays };
}
