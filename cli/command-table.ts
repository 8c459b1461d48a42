/**
 * The commands of `sluice`, as data: how each is called, what help says of it and its flags, the
 * operands it needs, and how it runs. `sluice --help` is rendered from this table (cli/usage.ts),
 * and docs/cli.md is checked against that help. Each command's module loads only when it runs.
 */
import { DEFAULT_REPOSITORY } from '../common/domain/catalogue.js';
import { type BackupCompression } from '../common/domain/backup-compression.js';
import { parseDriveSize } from '../common/domain/station.js';
import { wantsCustomisation } from './customise-flags.js';
import { type Flags } from './flags.js';
import { parseSize } from './size-option.js';
import { parseCount } from './station-flags.js';

/** One line of a command's help: the flags as typed, then what they do ('' for a heading). */
export type HelpEntry = readonly [flags: string, text: string];

export interface Command {
  name: string;
  /** Other names it answers to, each shown in help: a former name that keeps working. */
  aliases?: readonly string[];
  /** How it is called and what it does, as help's first lines for it; some commands have two forms. */
  forms: readonly (readonly [usage: string, summary: string])[];
  /** Its flags as help explains them. */
  help?: readonly HelpEntry[];
  /** The operands it takes (at least `min`, at most `max`), and the usage error when they are not. */
  operands: { min: number; max: number; error: (sub: string | undefined) => string };
  /** Runs it; a usage error for what only the command itself can tell is its `usageError` call. */
  run(flags: Flags, operands: readonly string[], usageError: (message: string) => number): Promise<number>;
}

/** The flags every command that writes takes: whether to ask, how to report, how to get root. */
function session(flags: Flags) {
  return { yes: flags.yes, json: flags.json, elevate: flags.elevate as 'sudo' | 'pkexec' | undefined };
}

/** The image source flags that flash, verify and info share. */
function imageSource(flags: Flags) {
  const cacheLimit = flags['cache-limit'];
  return {
    repos: flags.repo,
    cache: !flags['no-cache'],
    cacheLimit: cacheLimit === undefined ? undefined : (parseSize(cacheLimit) ?? undefined),
  };
}

/** `verify ISO DEVICE --iso-mode files`: the installer stick's files compared with the ISO's. */
async function installerFiles(flags: Flags, image: string, target: string, usageError: (message: string) => number) {
  if (wantsCustomisation(flags) || flags.exact || flags.repo !== undefined)
    return usageError(
      'verify --iso-mode files compares the files of an ISO: it takes no --exact, os: or customisation',
    );
  const { json, elevate } = session(flags);
  return (await import('./commands/verify-installer.js')).verifyInstallerCommand({ image, target, json, elevate });
}

/** `verify --customisation DEVICE`: what the card reports of its first boot, with no image. */
async function firstBoot(flags: Flags, operands: readonly string[], usageError: (message: string) => number) {
  const [device, ...more] = operands;
  if (device === undefined || more.length > 0) return usageError('verify --customisation needs exactly one DEVICE');
  if (wantsCustomisation(flags) || flags.exact || flags.repo !== undefined)
    return usageError('verify --customisation reads what the card says of itself: it takes no image options');
  const { json, elevate } = session(flags);
  return (await import('./commands/first-boot.js')).firstBootCommand({ target: device, json, elevate });
}

const bmapOf = (flags: Flags) => (flags['no-bmap'] ? false : flags.bmap);
const exactly = (n: number, what: string) => ({ min: n, max: n, error: () => what });

const FLASH_HELP: readonly HelpEntry[] = [
  ['--repo URL|FILE', 'the catalogue(s) os:ENTRY is found in, as for os list'],
  ['--no-cache', 'neither read os:ENTRY from the image cache nor keep its download'],
  [
    '--cache-limit SIZE',
    "the image cache's size limit, e.g. 20G (the default) or 500M; the least recently used images go first",
  ],
  [
    '--sha256 HEX',
    "the image file's SHA-256 (default: IMAGE.sha256 or SHA256SUMS next to it, when one lists it); a mismatch fails the flash",
  ],
  [
    '--bmap FILE',
    'write and verify only the blocks this bmap maps (default: IMAGE.bmap next to the image, or .meta/image.bmap in a zip)',
  ],
  ['--no-bmap', 'ignore a block map next to the image'],
  [
    '--exact',
    "write every byte of the image: no block map, and no free space left out (by default a filesystem's free space in a listed partition is left as it was on the drive; files get every byte)",
  ],
  [
    '--iso-mode files|image',
    "files: make an installer stick from an ISO's files (one FAT32 partition that UEFI boots; see docs/installers.md); image (the default): write the ISO byte for byte",
  ],
  ['--allow-truncated', 'write an image that ends before its partitions do (cut short); refused without it'],
  ['--builtin-decoders', "decode with Sluice's own decoders even where the system's xz, zstd or bzip2 would be faster"],
  ['--no-verify', 'skip reading the drive back (not recommended)'],
  ['--no-capacity-check', 'skip the check for fake capacity (markers written past the image and read back after it)'],
  ['--no-eject', 'leave the drive attached afterwards (it is ejected by default)'],
  ['--yes', 'do not ask before erasing (required without a terminal)'],
  ['--json', 'progress and results as JSON lines on stdout'],
  [
    '--elevate sudo|pkexec',
    'how to get root when not root already (default: sudo in a terminal, pkexec otherwise; only the writing process runs as root)',
  ],
  [
    '',
    "Customisation (first-boot settings, written after the image and read back; the image's method is found on its boot partition: see sluice info):",
  ],
  ['--hostname NAME', '{n} counts the cards: pi-{n} names them pi-1, pi-2, ...'],
  [
    '--user NAME [--password-file FILE]',
    'the first user; FILE holds the password, which only ever reaches the card as its sha512-crypt hash',
  ],
  ['--ssh-key FILE', 'turn SSH on with this public key (repeatable)'],
  ['--ssh-password', 'turn SSH on, with password login allowed'],
  [
    '--wifi-ssid SSID --wifi-country CC [--wifi-password-file FILE] [--wifi-hidden]',
    'Wi-Fi; the passphrase is written as its WPA key',
  ],
  ['--timezone Area/City, --keymap LAYOUT', ''],
  ['--customise PROFILE.json', 'a saved profile; the flags above override it'],
  ['--grow-root', "grow the root partition and filesystem to the card's end on the first boot"],
  [
    '--first-run-script FILE, --cloudinit-userdata FILE, --cloudinit-networkconfig FILE',
    "your own files in place of Sluice's (as rpi-imager --cli)",
  ],
];

export const COMMANDS: readonly Command[] = [
  {
    name: 'list',
    forms: [['list [--all] [--virtual] [--json]', 'list the drives Sluice would offer (cards, sticks)']],
    help: [
      ['--all', "also this computer's own disks, and virtual drives"],
      ['--virtual', 'also loop devices, RAM disks and disk images'],
    ],
    operands: exactly(0, 'list takes no arguments'),
    run: async (flags) =>
      (await import('./commands/list.js')).listCommand({ showAll: flags.all, showVirtual: flags.virtual }, flags.json),
  },
  {
    name: 'info',
    forms: [
      [
        'info IMAGE [--repo URL|FILE]... [--json]',
        'what IMAGE is: format, size, partitions, block map; IMAGE may be os:ENTRY (from the cache, or read from its web address; nothing is kept)',
      ],
    ],
    operands: exactly(1, 'info needs exactly one IMAGE'),
    run: async (flags, [image = '']) =>
      (await import('./commands/info.js')).infoCommand(
        image,
        { sha256: flags.sha256, bmap: bmapOf(flags), systemTools: !flags['builtin-decoders'], repos: flags.repo },
        flags.json,
      ),
  },
  {
    name: 'os',
    forms: [
      [
        'os list [--repo URL|FILE]... [--device BOARD] [--json]',
        'the OS entries of a catalogue, by their path in its category tree, with sizes and a "cached" mark',
      ],
      ['os boards [--repo URL|FILE]... [--json]', 'the boards a catalogue filters by, with their tags'],
    ],
    help: [
      [
        '--repo URL|FILE',
        `a catalogue in Raspberry Pi Imager's os_list v4 format, or an Imager .rpi-imager-manifest; repeat for several (default: Raspberry Pi's list, ${DEFAULT_REPOSITORY})`,
      ],
      ['--device BOARD', "only what runs on BOARD: a board's name or tag (sluice os boards)"],
    ],
    operands: { min: 0, max: 1, error: (sub) => `os ${sub ?? ''} takes no arguments` },
    run: async (flags, [sub], usageError) => {
      const args = { repos: flags.repo, device: flags.device, json: flags.json };
      if (sub === 'list') return (await import('./commands/os.js')).osListCommand(args);
      if (sub === 'boards') return (await import('./commands/os.js')).osBoardsCommand(args);
      return usageError('os takes list or boards');
    },
  },
  {
    name: 'cache',
    forms: [
      ['cache list [--json]', 'the images kept in the image cache'],
      ['cache clear [--json]', 'delete them (saved catalogues stay, for offline use)'],
    ],
    operands: { min: 0, max: 1, error: (sub) => `cache ${sub ?? ''} takes no arguments` },
    run: async (flags, [sub], usageError) => {
      if (sub === 'list') return (await import('./commands/cache.js')).cacheListCommand(flags.json);
      if (sub === 'clear') return (await import('./commands/cache.js')).cacheClearCommand(flags.json);
      return usageError('cache takes list or clear');
    },
  },
  {
    name: 'flash',
    forms: [
      ['flash IMAGE DEVICE... [options]', 'write IMAGE to one or more drives, then verify'],
      [
        'flash IMAGE FILE [options]',
        'write IMAGE, decoded, to a regular file (as you, no administrator rights); FILE appears only once verified',
      ],
      [
        '',
        'IMAGE is a file or an http(s) URL: raw (.img .iso …), .gz, .xz, .bz2, .zst, .zip (the image inside), .qcow2 or .dmg, decoded on the way (qcow2 and dmg from files only); or os:ENTRY, a catalogue entry by its path (os:"Category/Name") or by a name no other entry has, from the image cache when it holds it, else downloaded while it is written and kept in the cache',
      ],
    ],
    help: FLASH_HELP,
    operands: { min: 2, max: Infinity, error: () => 'flash needs an IMAGE and at least one DEVICE' },
    run: async (flags, [image = '', ...targets]) => {
      const common = {
        image,
        targets,
        verify: !flags['no-verify'],
        eject: !flags['no-eject'],
        ...session(flags),
      };
      if (flags['iso-mode'] === 'files')
        return (await import('./commands/flash-installer.js')).flashInstallerCommand(common);
      return (await import('./commands/flash.js')).flashCommand({
        ...common,
        sha256: flags.sha256,
        bmap: bmapOf(flags),
        systemTools: !flags['builtin-decoders'],
        capacityCheck: !flags['no-capacity-check'],
        allowTruncated: flags['allow-truncated'],
        exact: flags.exact,
        customise: flags,
        ...imageSource(flags),
      });
    },
  },
  {
    name: 'verify',
    forms: [
      [
        'verify IMAGE DEVICE [--exact] [--json] [--elevate sudo|pkexec] [customisation flags]',
        'compare a drive (or a file) with IMAGE, writing nothing; what a flash leaves unwritten is not compared, unless --exact; with --iso-mode files, every file of an installer stick; with the customisation it was given; IMAGE may be os:ENTRY (with --repo, --no-cache and --cache-limit as for flash)',
      ],
      [
        'verify --customisation DEVICE [--json] [--elevate sudo|pkexec]',
        'what a card customised with firstrun.sh says of its first boot: each setting applied or FAILED, read back from its boot partition; exit 0 only when every one applied',
      ],
    ],
    operands: { min: 0, max: Infinity, error: () => '' },
    run: async (flags, operands, usageError) => {
      if (flags.customisation) return firstBoot(flags, operands, usageError);
      const [image, target, ...extra] = operands;
      if (image === undefined || target === undefined || extra.length > 0)
        return usageError('verify needs exactly one IMAGE and one DEVICE');
      if (flags['iso-mode'] === 'files') return installerFiles(flags, image, target, usageError);
      return (await import('./commands/verify.js')).verifyCommand({
        image,
        target,
        json: flags.json,
        elevate: session(flags).elevate,
        exact: flags.exact,
        customise: flags,
        ...imageSource(flags),
      });
    },
  },
  {
    name: 'check',
    aliases: ['probe'],
    forms: [
      [
        'check DEVICE [--yes] [--json] [--elevate sudo|pkexec]',
        'check a drive for fake capacity: its real size, the kind of fake, in seconds; every block it writes is saved first and put back',
      ],
    ],
    operands: exactly(1, 'check needs exactly one DEVICE'),
    run: async (flags, [device = '']) =>
      (await import('./commands/check.js')).checkCommand({
        device,
        ...session(flags),
      }),
  },
  {
    name: 'erase',
    forms: [
      [
        'erase DEVICE [--label NAME] [--yes] [--json] [--elevate sudo|pkexec]',
        "make a drive a normal empty one again: one partition, FAT32 up to 32 GiB, exFAT above (as the SD Association's formatter); only its tables are written, then read back",
      ],
    ],
    operands: exactly(1, 'erase needs exactly one DEVICE'),
    run: async (flags, [device = '']) =>
      (await import('./commands/erase.js')).eraseCommand({
        device,
        label: flags.label ?? null,
        ...session(flags),
      }),
  },
  {
    name: 'station',
    forms: [
      [
        'station IMAGE [options]',
        'a flashing station: every card inserted from now on is written, checked, verified, customised, ejected and logged on its own, up to 16 at once; until Ctrl-C or --count cards',
      ],
    ],
    help: [
      [
        '--customise PROFILE.json, --hostname pi-{n}, ...',
        'the customisation flags above; {n} counts cards in insertion order',
      ],
      [
        '--slots PATH',
        "take cards only in this reader slot (repeatable): a /dev/disk/by-path name, or a loop device's backing file; default: any removable, USB or SD drive",
      ],
      [
        '--min-size N, --max-size N',
        "take only drives of this size (8GB, 30GiB or bytes; default: the image's size to 2TB)",
      ],
      ['--log FILE', 'the JSON Lines log, one line per card (default: sluice-station.jsonl)'],
      ['--count N', 'stop after N cards'],
      [
        '--cache-limit SIZE',
        "the image cache's size limit, as for flash: a compressed image is decoded once into it, for every card",
      ],
      ['--keep', 'keep that decoded copy in the cache when the station stops, for the next station of the same image'],
      ['--exact', 'write every byte of the image to every card, as for flash'],
      ['--virtual', 'also take loop devices (for tests)'],
      ['--yes, --json, --elevate', 'as for flash'],
    ],
    operands: exactly(1, 'station needs exactly one IMAGE (name reader slots with --slots)'),
    run: async (flags, [image = '']) => {
      const size = (text: string | undefined) => (text === undefined ? undefined : (parseDriveSize(text) ?? undefined));
      return (await import('./commands/station.js')).stationCommand({
        image,
        customise: flags,
        slots: flags.slots ?? [],
        minSize: size(flags['min-size']),
        maxSize: size(flags['max-size']),
        log: flags.log ?? 'sluice-station.jsonl',
        count: flags.count === undefined ? null : parseCount(flags.count),
        virtual: flags.virtual,
        exact: flags.exact,
        keep: flags.keep,
        cacheLimit: imageSource(flags).cacheLimit,
        ...session(flags),
      });
    },
  },
  {
    name: 'station-csv',
    forms: [['station-csv LOG', "a station's log as CSV, on stdout"]],
    operands: exactly(1, 'station-csv needs exactly one LOG'),
    run: async (_flags, [log = '']) => (await import('./commands/station-csv.js')).stationCsvCommand(log),
  },
  {
    name: 'backup',
    forms: [
      [
        'backup DRIVE FILE [options]',
        'copy a drive into an image file, then verify: the used blocks of its ext2/3/4 and FAT filesystems and everything else whole. Free space is not read: FILE.bmap lists the used blocks (a flash writes only those), with or without --compress',
      ],
    ],
    help: [
      ['--all-blocks', 'read every byte of the drive, free space too'],
      [
        '--compress zstd|xz|gz',
        "compress the image with the system's zstd, xz or gzip; free space is then zeros in the stream, which cost almost nothing (uncompressed, it is a hole in the sparse FILE)",
      ],
      [
        '--trim-to-partitions',
        "stop after the end of the last partition (a GPT's backup header at the drive's end is left out)",
      ],
      [
        '--shrink',
        'shrink the last partition (ext2/3/4, FAT16 or FAT32) to what it holds and cut the file after it, so that it restores onto a smaller card (Linux: e2fsprogs, sfdisk, fsck.fat; not with --compress)',
      ],
      ['--no-verify, --yes (replace FILE), --json, --elevate', 'as for flash'],
    ],
    operands: exactly(2, 'backup needs exactly one DRIVE and one FILE'),
    run: async (flags, [drive = '', file = ''], usageError) => {
      const compress = (flags.compress as BackupCompression | undefined) ?? null;
      const cannotShrink = flags.shrink
        ? await (await import('../user/backup/shrink-refusal.js')).shrinkRefusal(compress !== null)
        : null;
      if (cannotShrink !== null) return usageError(cannotShrink);
      return (await import('./commands/backup.js')).backupCommand({
        drive,
        file,
        compress,
        trimToPartitions: flags['trim-to-partitions'],
        allBlocks: flags['all-blocks'],
        shrink: flags.shrink,
        verify: !flags['no-verify'],
        ...session(flags),
      });
    },
  },
  {
    name: 'clone',
    forms: [['clone SOURCE_DRIVE TARGET_DRIVE [options]', 'copy a whole drive onto another, then verify']],
    help: [['--no-verify, --no-eject, --yes, --json, --elevate', 'as for flash']],
    operands: exactly(2, 'clone needs exactly one SOURCE_DRIVE and one TARGET_DRIVE'),
    run: async (flags, [source = '', target = '']) =>
      (await import('./commands/clone.js')).cloneCommand({
        source,
        target,
        verify: !flags['no-verify'],
        eject: !flags['no-eject'],
        ...session(flags),
      }),
  },
];
