import { parseArgs } from 'node:util';
import { BACKUP_COMPRESSIONS, type BackupCompression } from '../common/domain/backup-compression.js';
import { EXIT } from './exit-codes.js';
import { errorText } from '../common/domain/error-details.js';
import { parseDriveSize } from '../common/domain/station.js';
import { parseCount, STATION_OPTIONS } from './station-flags.js';
import {
  CUSTOMISE_OPTIONS,
  customiseFlagsProblem,
  wantsCustomisation,
  type CustomiseFlags,
} from './customise-flags.js';
import { parseSize } from './size-option.js';
import { DEFAULT_REPOSITORY } from '../common/domain/catalogue.js';

const USAGE = `Usage:
  sluice list [--all] [--virtual] [--json]      list the drives Sluice would offer (cards, sticks)
      --all         also this computer's own disks, and virtual drives
      --virtual     also loop devices, RAM disks and disk images
  sluice info IMAGE [--repo URL|FILE]... [--json]
                                                what IMAGE is: format, size, partitions, block map;
                                                IMAGE may be os:ENTRY (from the cache, or read from
                                                its web address; nothing is kept)
  sluice os list [--repo URL|FILE]... [--device BOARD] [--json]
                                                the OS entries of a catalogue, by their path in
                                                its category tree, with sizes and a "cached" mark
      --repo URL|FILE
                    a catalogue in Raspberry Pi Imager's os_list v4 format, or an
                    Imager .rpi-imager-manifest; repeat for several (default:
                    Raspberry Pi's list,
                    ${DEFAULT_REPOSITORY})
      --device BOARD
                    only what runs on BOARD: a board's name or tag (sluice os boards)
  sluice os boards [--repo URL|FILE]... [--json]
                                                the boards a catalogue filters by, with their tags
  sluice cache list [--json]                    the images kept in the image cache
  sluice cache clear [--json]                   delete them (saved catalogues stay, for offline use)
  sluice flash IMAGE DEVICE... [options]        write IMAGE to one or more drives, then verify
  sluice flash IMAGE FILE [options]             write IMAGE, decoded, to a regular file (as you,
                    no administrator rights); FILE appears only once verified
                    IMAGE is a file or an http(s) URL: raw (.img .iso …), .gz, .xz,
                    .bz2, .zst, .zip (the image inside), .qcow2 or .dmg, decoded on
                    the way (qcow2 and dmg from files only); or os:ENTRY, a catalogue
                    entry by its path (os:"Category/Name") or by a name no other
                    entry has, from the image cache when it holds it, else
                    downloaded while it is written and kept in the cache
      --repo URL|FILE
                    the catalogue(s) os:ENTRY is found in, as for os list
      --no-cache    neither read os:ENTRY from the image cache nor keep its download
      --cache-limit SIZE
                    the image cache's size limit, e.g. 20G (the default) or 500M; the
                    least recently used images go first
      --sha256 HEX  the image file's SHA-256 (default: IMAGE.sha256 or SHA256SUMS
                    next to it, when one lists it); a mismatch fails the flash
      --bmap FILE   write and verify only the blocks this bmap maps (default:
                    IMAGE.bmap next to the image, or .meta/image.bmap in a zip)
      --no-bmap     ignore a block map next to the image
      --exact       write every byte of the image: no block map, and no free space
                    left out (by default a filesystem's free space in a listed
                    partition is left as it was on the drive; files get every byte)
      --iso-mode files|image
                    files: make an installer stick from an ISO's files (one
                    FAT32 partition that UEFI boots; see docs/installers.md);
                    image (the default): write the ISO byte for byte
      --allow-truncated
                    write an image that ends before its partitions do (cut
                    short); refused without it
      --builtin-decoders
                    decode with Sluice's own decoders even where the system's
                    xz, zstd or bzip2 would be faster
      --no-verify   skip reading the drive back (not recommended)
      --no-capacity-check
                    skip the check for fake capacity (markers written past the
                    image and read back after it)
      --no-eject    leave the drive attached afterwards (it is ejected by default)
      --yes         do not ask before erasing (required without a terminal)
      --json        progress and results as JSON lines on stdout
      --elevate sudo|pkexec
                    how to get root when not root already (default: sudo in a
                    terminal, pkexec otherwise; only the writing process runs as root)
    Customisation (first-boot settings, written after the image and read back; the
    image's method is found on its boot partition: see sluice info):
      --hostname NAME            {n} counts the cards: pi-{n} names them pi-1, pi-2, ...
      --user NAME [--password-file FILE]
                                 the first user; FILE holds the password, which only
                                 ever reaches the card as its sha512-crypt hash
      --ssh-key FILE             turn SSH on with this public key (repeatable)
      --ssh-password             turn SSH on, with password login allowed
      --wifi-ssid SSID --wifi-country CC [--wifi-password-file FILE] [--wifi-hidden]
                                 Wi-Fi; the passphrase is written as its WPA key
      --timezone Area/City, --keymap LAYOUT
      --customise PROFILE.json   a saved profile; the flags above override it
      --first-run-script FILE, --cloudinit-userdata FILE, --cloudinit-networkconfig FILE
                                 your own files in place of Sluice's (as rpi-imager --cli)
  sluice verify IMAGE DEVICE [--exact] [--json] [--elevate sudo|pkexec] [customisation flags]
                                                compare a drive (or a file) with IMAGE, writing nothing;
                    what a flash leaves unwritten is not compared, unless --exact;
                    with the customisation it was given; IMAGE may be os:ENTRY (with
                    --repo, --no-cache and --cache-limit as for flash)
  sluice verify --customisation DEVICE [--json] [--elevate sudo|pkexec]
                                                what a card customised with firstrun.sh says of
                                                its first boot: each setting applied or FAILED,
                                                read back from its boot partition; exit 0 only
                                                when every one applied
  sluice probe DEVICE [--yes] [--json] [--elevate sudo|pkexec]
                                                check a drive for fake capacity: its real size,
                                                the kind of fake, in seconds; every block it
                                                writes is saved first and put back
  sluice erase DEVICE [--label NAME] [--yes] [--json] [--elevate sudo|pkexec]
                                                make a drive a normal empty one again: one
                                                partition, FAT32 up to 32 GiB, exFAT above (as
                                                the SD Association's formatter); only its tables
                                                are written, then read back
  sluice station IMAGE [options]               a flashing station: every card inserted from now
                                                on is written, checked, verified, customised,
                                                ejected and logged on its own, up to 16 at once;
                                                until Ctrl-C or --count cards
      --customise PROFILE.json, --hostname pi-{n}, ...
                    the customisation flags above; {n} counts cards in insertion order
      --slots PATH  take cards only in this reader slot (repeatable): a
                    /dev/disk/by-path name, or a loop device's backing file;
                    default: any removable, USB or SD drive
      --min-size N, --max-size N
                    take only drives of this size (8GB, 30GiB or bytes; default: the
                    image's size to 2TB)
      --log FILE    the JSON Lines log, one line per card (default: sluice-station.jsonl)
      --count N     stop after N cards
      --exact       write every byte of the image to every card, as for flash
      --virtual     also take loop devices (for tests)
      --yes, --json, --elevate as for flash
  sluice station-csv LOG                        a station's log as CSV, on stdout
  sluice backup DRIVE FILE [options]            copy a drive into an image file, then verify: the
                                                used blocks of its ext2/3/4 and FAT filesystems and
                                                everything else whole; free space is a hole in the
                                                file, listed in FILE.bmap
      --all-blocks  read every byte of the drive, free space too
      --compress zstd|xz|gz
                    compress the image with the system's zstd, xz or gzip
      --trim-to-partitions
                    stop after the end of the last partition (a GPT's backup
                    header at the drive's end is left out)
      --no-verify, --yes (replace FILE), --json, --elevate as for flash
  sluice clone SOURCE_DRIVE TARGET_DRIVE [options]
                                                copy a whole drive onto another, then verify
      --no-verify, --no-eject, --yes, --json, --elevate as for flash

Downloads that break off are resumed from where they stopped (5 tries in a row, 1 to 16 s
apart). The image cache is in ~/.cache/sluice (Linux), ~/Library/Caches/Sluice (macOS) or
%LOCALAPPDATA%\\Sluice\\Cache (Windows); SLUICE_CACHE_DIR names another.

Exit codes: 0 success, 1 flash or verify failed, 2 usage error (or settings the image
cannot take), 3 unsupported image format,
4 target refused for safety, 5 administrator rights not granted, 130 cancelled.
`;

function usageError(message: string): number {
  process.stderr.write(`sluice: ${message}\n\n${USAGE}`);
  return EXIT.usage;
}

function isCompression(value: string): value is BackupCompression {
  return (BACKUP_COMPRESSIONS as readonly string[]).includes(value);
}

export async function main(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        json: { type: 'boolean', default: false },
        yes: { type: 'boolean', short: 'y', default: false },
        'no-verify': { type: 'boolean', default: false },
        'no-capacity-check': { type: 'boolean', default: false },
        'no-eject': { type: 'boolean', default: false },
        all: { type: 'boolean', default: false },
        virtual: { type: 'boolean', default: false },
        elevate: { type: 'string' },
        sha256: { type: 'string' },
        bmap: { type: 'string' },
        'no-bmap': { type: 'boolean', default: false },
        exact: { type: 'boolean', default: false },
        'allow-truncated': { type: 'boolean', default: false },
        'iso-mode': { type: 'string' },
        'builtin-decoders': { type: 'boolean', default: false },
        compress: { type: 'string' },
        label: { type: 'string' },
        'trim-to-partitions': { type: 'boolean', default: false },
        'all-blocks': { type: 'boolean', default: false },
        repo: { type: 'string', multiple: true },
        'no-cache': { type: 'boolean', default: false },
        'cache-limit': { type: 'string' },
        device: { type: 'string' },
        customisation: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
        ...CUSTOMISE_OPTIONS,
        ...STATION_OPTIONS,
      },
    });
  } catch (error) {
    return usageError(errorText(error));
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === 'help') {
    process.stdout.write(USAGE);
    return EXIT.ok;
  }
  const { sha256 } = values;
  if (sha256 !== undefined && !/^[0-9a-fA-F]{64}$/.test(sha256))
    return usageError(`--sha256 takes the 64 hexadecimal digits of a SHA-256, not "${sha256}"`);
  if (values.bmap !== undefined && values['no-bmap']) return usageError('--bmap and --no-bmap exclude each other');
  if (values.exact && values.bmap !== undefined) return usageError('--exact writes every byte: it excludes --bmap');
  if (values.exact && command !== 'flash' && command !== 'verify' && command !== 'station')
    return usageError('--exact is an option of flash, verify and station');
  const bmap = values['no-bmap'] ? false : values.bmap;
  const { elevate, compress } = values;
  if (elevate !== undefined && elevate !== 'sudo' && elevate !== 'pkexec')
    return usageError(`--elevate takes sudo or pkexec, not "${elevate}"`);
  if (compress !== undefined && !isCompression(compress))
    return usageError(`--compress takes ${BACKUP_COMPRESSIONS.join(', ')}, not "${compress}"`);
  if (command !== 'backup' && (compress !== undefined || values['trim-to-partitions'] || values['all-blocks']))
    return usageError('--compress, --trim-to-partitions and --all-blocks are options of backup');
  const isoMode = values['iso-mode'];
  if (isoMode !== undefined && (command !== 'flash' || (isoMode !== 'files' && isoMode !== 'image')))
    return usageError('--iso-mode takes files or image, and is an option of flash');
  if (command !== 'flash' && values['allow-truncated']) return usageError('--allow-truncated is an option of flash');
  if (command !== 'erase' && values.label !== undefined) return usageError('--label is an option of erase');
  if (command !== 'flash' && values['no-capacity-check'])
    return usageError('--no-capacity-check is an option of flash');
  const customise: CustomiseFlags = values;
  if (command !== 'flash' && command !== 'verify' && command !== 'station' && wantsCustomisation(customise))
    return usageError('the customisation flags are options of flash, verify and station');
  if (
    command !== 'station' &&
    Object.keys(STATION_OPTIONS).some((k) => values[k as keyof typeof STATION_OPTIONS] !== undefined)
  )
    return usageError('--slots, --min-size, --max-size, --log and --count are options of station');
  const customiseProblem = customiseFlagsProblem(customise);
  if (customiseProblem !== null) return usageError(customiseProblem);
  if (!['flash', 'verify', 'info', 'os'].includes(command ?? '') && values.repo !== undefined)
    return usageError('--repo is an option of os, flash, verify and info');
  if (command !== 'flash' && command !== 'verify' && (values['no-cache'] || values['cache-limit'] !== undefined))
    return usageError('--no-cache and --cache-limit are options of flash and verify');
  if (values.customisation && command !== 'verify') return usageError('--customisation is an option of verify');
  if (values.device !== undefined && !(command === 'os' && rest[0] === 'list'))
    return usageError('--device is an option of os list');
  const cacheLimit = values['cache-limit'] === undefined ? undefined : parseSize(values['cache-limit']);
  if (cacheLimit === null)
    return usageError(`--cache-limit takes a size such as 20G or 500M, not "${values['cache-limit']}"`);
  // Each command's modules load only when it runs: `sluice --help` or a usage error need none of them.
  switch (command) {
    case 'info': {
      const [image, ...extra] = rest;
      if (image === undefined || extra.length > 0) return usageError('info needs exactly one IMAGE');
      return (await import('./commands/info.js')).infoCommand(
        image,
        { sha256, bmap, systemTools: !values['builtin-decoders'], repos: values.repo },
        values.json,
      );
    }
    case 'list':
      return rest.length === 0
        ? (await import('./commands/list.js')).listCommand(
            { showAll: values.all, showVirtual: values.virtual },
            values.json,
          )
        : usageError('list takes no arguments');
    case 'flash': {
      const [image, ...targets] = rest;
      if (image === undefined || targets.length === 0)
        return usageError('flash needs an IMAGE and at least one DEVICE');
      if (isoMode === 'files')
        return (await import('./commands/flash-installer.js')).flashInstallerCommand({
          image,
          targets,
          verify: !values['no-verify'],
          eject: !values['no-eject'],
          yes: values.yes,
          json: values.json,
          elevate,
        });
      return (await import('./commands/flash.js')).flashCommand({
        image,
        targets,
        sha256,
        bmap,
        systemTools: !values['builtin-decoders'],
        verify: !values['no-verify'],
        capacityCheck: !values['no-capacity-check'],
        eject: !values['no-eject'],
        yes: values.yes,
        json: values.json,
        elevate,
        allowTruncated: values['allow-truncated'],
        exact: values.exact,
        customise,
        repos: values.repo,
        cache: !values['no-cache'],
        cacheLimit,
      });
    }
    case 'verify': {
      if (values.customisation) {
        const [device, ...more] = rest;
        if (device === undefined || more.length > 0)
          return usageError('verify --customisation needs exactly one DEVICE');
        if (wantsCustomisation(customise) || values.exact || values.repo !== undefined)
          return usageError('verify --customisation reads what the card says of itself: it takes no image options');
        return (await import('./commands/first-boot.js')).firstBootCommand({
          target: device,
          json: values.json,
          elevate,
        });
      }
      const [image, target, ...extra] = rest;
      if (image === undefined || target === undefined || extra.length > 0)
        return usageError('verify needs exactly one IMAGE and one DEVICE');
      return (await import('./commands/verify.js')).verifyCommand({
        image,
        target,
        json: values.json,
        elevate,
        exact: values.exact,
        customise,
        repos: values.repo,
        cache: !values['no-cache'],
        cacheLimit,
      });
    }
    case 'probe': {
      const [device, ...extra] = rest;
      if (device === undefined || extra.length > 0) return usageError('probe needs exactly one DEVICE');
      return (await import('./commands/probe.js')).probeCommand({
        device,
        yes: values.yes,
        json: values.json,
        elevate,
      });
    }
    case 'erase': {
      const [device, ...extra] = rest;
      if (device === undefined || extra.length > 0) return usageError('erase needs exactly one DEVICE');
      return (await import('./commands/erase.js')).eraseCommand({
        device,
        label: values.label ?? null,
        yes: values.yes,
        json: values.json,
        elevate,
      });
    }
    case 'station': {
      const [image, ...extra] = rest;
      if (image === undefined || extra.length > 0)
        return usageError('station needs exactly one IMAGE (name reader slots with --slots)');
      const [minSize, maxSize] = [values['min-size'], values['max-size']].map((s) =>
        s === undefined ? undefined : parseDriveSize(s),
      );
      if (minSize === null || maxSize === null)
        return usageError('--min-size and --max-size take a size such as 8GB, 30GiB or a number of bytes');
      const count = values.count === undefined ? null : parseCount(values.count);
      if (count === null && values.count !== undefined)
        return usageError(`--count takes a number of cards, not "${values.count}"`);
      return (await import('./commands/station.js')).stationCommand({
        image,
        customise,
        slots: values.slots ?? [],
        minSize,
        maxSize,
        log: values.log ?? 'sluice-station.jsonl',
        count,
        virtual: values.virtual,
        exact: values.exact,
        yes: values.yes,
        json: values.json,
        elevate,
      });
    }
    case 'station-csv': {
      const [log, ...extra] = rest;
      if (log === undefined || extra.length > 0) return usageError('station-csv needs exactly one LOG');
      return (await import('./commands/station-csv.js')).stationCsvCommand(log);
    }
    case 'backup': {
      const [drive, file, ...extra] = rest;
      if (drive === undefined || file === undefined || extra.length > 0)
        return usageError('backup needs exactly one DRIVE and one FILE');
      return (await import('./commands/backup.js')).backupCommand({
        drive,
        file,
        compress: compress ?? null,
        trimToPartitions: values['trim-to-partitions'],
        allBlocks: values['all-blocks'],
        verify: !values['no-verify'],
        yes: values.yes,
        json: values.json,
        elevate,
      });
    }
    case 'clone': {
      const [source, target, ...extra] = rest;
      if (source === undefined || target === undefined || extra.length > 0)
        return usageError('clone needs exactly one SOURCE_DRIVE and one TARGET_DRIVE');
      return (await import('./commands/clone.js')).cloneCommand({
        source,
        target,
        verify: !values['no-verify'],
        eject: !values['no-eject'],
        yes: values.yes,
        json: values.json,
        elevate,
      });
    }
    case 'os': {
      const [sub, ...extra] = rest;
      if (extra.length > 0) return usageError(`os ${sub ?? ''} takes no arguments`);
      const args = { repos: values.repo, device: values.device, json: values.json };
      if (sub === 'list') return (await import('./commands/os.js')).osListCommand(args);
      if (sub === 'boards') return (await import('./commands/os.js')).osBoardsCommand(args);
      return usageError('os takes list or boards');
    }
    case 'cache': {
      const [sub, ...extra] = rest;
      if (extra.length > 0) return usageError(`cache ${sub ?? ''} takes no arguments`);
      if (sub === 'list') return (await import('./commands/cache.js')).cacheListCommand(values.json);
      if (sub === 'clear') return (await import('./commands/cache.js')).cacheClearCommand(values.json);
      return usageError('cache takes list or clear');
    }
    case undefined:
      return usageError('no command given');
    default:
      return usageError(`unknown command "${command}"`);
  }
}

process.exitCode = await main(process.argv.slice(2));
