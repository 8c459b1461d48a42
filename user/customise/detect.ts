/**
 * Which first-boot method an image has: read from its FAT boot partition and, where
 * the image can be read at any offset, its ext4 root filesystem. The rules, in order:
 *
 * - rpi-preseed: the root filesystem has rpi-preseed's unit; rpi-preseed.toml goes on the boot
 *   partition (the newest Raspberry Pi OS releases).
 * - cloud-init: the boot partition holds NoCloud seed files (user-data, meta-data,
 *   network-config), or the root filesystem has /etc/cloud and the boot partition a cmdline.txt
 *   to name the seed in (ds=nocloud).
 * - systemd firstrun: the boot partition has cmdline.txt and config.txt (Raspberry Pi OS and its
 *   derivatives; imager_custom in the root filesystem, or an older image without it).
 * - none: nothing is guessed; the words say what was looked for.
 *
 * An OS from a catalogue comes with its entry's init_format: see detectMethod.
 */
import type { CustomisationMethod, CustomisationSupport } from '../../common/domain/customisation.js';
import type { InitFormat } from '../../common/domain/catalogue.js';
import type { PartitionEntry, PartitionTable } from '../../common/domain/image.js';
import type { ReadAt } from '../../node/read-at.js';
import { Ext4Reader } from './ext4.js';
import { FatEditor, findEntry } from './fat.js';

/** NoCloud's seed files on the boot partition. */
export const SEED_FILES = ['user-data', 'meta-data', 'network-config'] as const;
const PRESEED_UNITS = ['/usr/lib/systemd/system/rpi-preseed.service', '/lib/systemd/system/rpi-preseed.service'];
const IMAGER_CUSTOM = '/usr/lib/raspberrypi-sys-mods/imager_custom';

/** What detection found, and what planning the files needs to know of it. */
export interface Detection extends CustomisationSupport {
  /** The FAT boot partition, when there is one. */
  boot: PartitionEntry | null;
  /** Where the running system mounts the boot partition: /boot/firmware (Bookworm and later) or /boot. */
  bootDir: '/boot' | '/boot/firmware';
  /** cloud-init found in the root filesystem only: cmdline.txt must name the seed (ds=nocloud). */
  seedOnCommandLine: boolean;
}

/** The reader of the image and what it can do. */
export interface ImageAccess {
  readAt: ReadAt;
  /** Reads at any offset cost no more than reads in order (a raw file): the root filesystem can be looked at. */
  random: boolean;
}

/** The first partition holding a FAT volume, opened. */
export async function findBoot(
  readAt: ReadAt,
  table: PartitionTable,
): Promise<{ partition: PartitionEntry; fat: FatEditor } | null> {
  const partitions =
    table.type === 'none' && table.partitions.length === 0
      ? []
      : [...table.partitions].sort((a, b) => a.number - b.number);
  for (const partition of partitions) {
    const fat = await FatEditor.open(readAt, partition.offset, partition.size);
    if (fat !== null) return { partition, fat };
  }
  return null;
}

/** The first partition after the boot partition holding an ext2/3/4 filesystem. */
async function findRoot(access: ImageAccess, table: PartitionTable, boot: PartitionEntry): Promise<Ext4Reader | null> {
  for (const partition of [...table.partitions].sort((a, b) => a.number - b.number)) {
    if (partition.number === boot.number) continue;
    const root = await Ext4Reader.open(access.readAt, partition.offset, partition.size);
    if (root !== null) return root;
  }
  return null;
}

function support(method: CustomisationMethod | null, why: string, rest: Omit<Detection, 'method' | 'why'>): Detection {
  return { method, why, ...rest };
}

/**
 * What the contents of the image `access` reads say, whose partition table is `table`; `undecided`
 * says why they cannot tell the methods apart, when they cannot.
 */
async function detectFromContents(
  access: ImageAccess,
  table: PartitionTable | null,
): Promise<Detection & { undecided: string | null }> {
  const none = { boot: null, bootDir: '/boot' as const, seedOnCommandLine: false };
  const lookedFor =
    'looked for cmdline.txt and config.txt (Raspberry Pi OS), cloud-init seed files (user-data, meta-data, network-config) or /etc/cloud, and rpi-preseed';
  if (table === null)
    return {
      ...support(null, `The partition table could not be read, so no boot partition was found (${lookedFor}).`, none),
      undecided: null,
    };
  const found = await findBoot(access.readAt, table);
  if (found === null) return { ...support(null, `No FAT boot partition (${lookedFor}).`, none), undecided: null };
  const { partition, fat } = found;
  const entries = fat.entries();
  const has = (name: string) => findEntry(entries, name) !== null;
  const seeds = SEED_FILES.filter(has);
  const piBoot = has('cmdline.txt') && has('config.txt');
  const where = `partition ${partition.number}`;

  const root = access.random ? await findRoot(access, table, partition) : null;
  const unread = access.random
    ? 'no ext4 root filesystem was found'
    : 'the root filesystem was not read: it is not reachable without decoding the whole image';
  const rootNote = root !== null ? '' : ` ${unread.charAt(0).toUpperCase()}${unread.slice(1)}.`;
  const preseed = root !== null && (await anyExists(root, PRESEED_UNITS));
  const cloud = root !== null && (await root.kind('/etc/cloud')) === 'directory';
  const imagerCustom = root !== null && (await root.kind(IMAGER_CUSTOM)) === 'file';
  const firmwareDir =
    root !== null
      ? (await root.kind('/boot/firmware')) === 'directory'
      : /\/boot\/firmware\//.test((await fat.readFile('config.txt'))?.toString('latin1') ?? '');
  const bootDir = firmwareDir ? '/boot/firmware' : '/boot';
  const rest = { boot: partition, bootDir, seedOnCommandLine: false } as const;

  /** What the image's own contents say, without the catalogue's word. */
  const contents = (): Detection => {
    if (preseed)
      return support(
        'rpi-preseed',
        `The root filesystem has rpi-preseed (${PRESEED_UNITS[0]}); rpi-preseed.toml goes on the boot partition (${where}).`,
        rest,
      );
    if (seeds.length > 0)
      return support(
        'cloud-init',
        `The boot partition (${where}) holds cloud-init seed files (${seeds.join(', ')}).`,
        rest,
      );
    if (cloud && has('cmdline.txt'))
      return support(
        'cloud-init',
        `The root filesystem has /etc/cloud; the seed files go on the boot partition (${where}) and cmdline.txt names them (ds=nocloud).`,
        { ...rest, seedOnCommandLine: true },
      );
    if (piBoot) {
      const evidence = imagerCustom
        ? `and the root filesystem has ${IMAGER_CUSTOM}`
        : root !== null
          ? `(an image older than ${IMAGER_CUSTOM}: firstrun.sh falls back to plain commands)`
          : `(${rootNote.trim()})`;
      return support(
        'systemd-firstrun',
        `The boot partition (${where}) has cmdline.txt and config.txt ${evidence}; firstrun.sh runs from the boot partition, mounted at /boot/firmware or /boot.`,
        rest,
      );
    }
    return support(
      null,
      `The boot partition (${where}) has none of what Sluice looks for (${lookedFor}).${rootNote}`,
      none,
    );
  };
  // Only cmdline.txt and config.txt, and no root filesystem read: Raspberry Pi OS's firstrun, cloud-init and rpi-preseed all fit.
  const undecided =
    root === null && seeds.length === 0 && piBoot
      ? `the boot partition (${where}) has cmdline.txt and config.txt, which do not tell the methods apart, and ${unread}`
      : null;
  return { ...contents(), undecided };
}

/**
 * The customisation method of the image `access` reads, whose partition table is `table`. `hint` is
 * a catalogue entry's init_format: it chooses where the image's contents cannot tell the
 * methods apart, and the contents win where they can; the words say which happened.
 */
export async function detectMethod(
  access: ImageAccess,
  table: PartitionTable | null,
  hint: InitFormat | null = null,
): Promise<Detection> {
  const { undecided, ...found } = await detectFromContents(access, table);
  if (hint === null) return found;
  const named = `init_format "${hint}"`;
  const wanted = methodOfInitFormat(hint);
  if (wanted === found.method) return { ...found, why: `${found.why} The catalogue entry says the same (${named}).` };
  if (undecided === null)
    return {
      ...found,
      why: `${found.why} The catalogue entry names ${wanted ?? 'no customisation'} (${named}), but the image's own contents win.`,
    };
  const chosen = `The catalogue entry chooses ${wanted ?? 'no customisation'} (${named}): ${undecided}.`;
  if (wanted === null) return support(null, chosen, { boot: null, bootDir: '/boot', seedOnCommandLine: false });
  const rest = { boot: found.boot, bootDir: found.bootDir, seedOnCommandLine: wanted === 'cloud-init' };
  if (wanted === 'cloud-init')
    return support(
      wanted,
      `${chosen} The seed files go on the boot partition and cmdline.txt names them (ds=nocloud).`,
      rest,
    );
  // Undecided contents say systemd-firstrun themselves, so a catalogue that differs here names rpi-preseed.
  return support(wanted, `${chosen} rpi-preseed.toml goes on the boot partition.`, rest);
}

/** The method a catalogue entry's init_format (Raspberry Pi Imager's values) names; null for "none". */
export function methodOfInitFormat(format: InitFormat): CustomisationMethod | null {
  switch (format) {
    case 'systemd':
      return 'systemd-firstrun';
    case 'cloudinit':
    case 'cloudinit-rpi':
      return 'cloud-init';
    case 'rpi-preseed':
      return 'rpi-preseed';
    case 'none':
      return null;
  }
}

async function anyExists(root: Ext4Reader, paths: readonly string[]): Promise<boolean> {
  for (const path of paths) if ((await root.kind(path)) !== null) return true;
  return false;
}
