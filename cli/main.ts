import { parseArgs } from 'node:util';
import { BACKUP_COMPRESSIONS, type BackupCompression } from '../common/domain/backup-compression.js';
import { EXIT } from './exit-codes.js';
import { errorText } from '../common/domain/error-details.js';

const USAGE = `Usage:
  sluice list [--all] [--virtual] [--json]      list the drives Sluice would offer (cards, sticks)
      --all         also this computer's own disks, and virtual drives
      --virtual     also loop devices, RAM disks and disk images
  sluice info IMAGE [--json]                    what IMAGE is: format, size, partitions, block map
  sluice flash IMAGE DEVICE... [options]        write IMAGE to one or more drives, then verify
  sluice flash IMAGE FILE [options]             write IMAGE, decoded, to a regular file (as you,
                    no administrator rights); FILE appears only once verified
                    IMAGE is a file or an http(s) URL: raw (.img .iso …), .gz, .xz,
                    .bz2, .zst, .zip (the image inside), .qcow2 or .dmg, decoded on
                    the way (qcow2 and dmg from files only)
      --sha256 HEX  the image file's SHA-256 (default: IMAGE.sha256 or SHA256SUMS
                    next to it, when one lists it); a mismatch fails the flash
      --bmap FILE   write and verify only the blocks this bmap maps (default:
                    IMAGE.bmap next to the image, or .meta/image.bmap in a zip)
      --no-bmap     ignore a block map next to the image
      --allow-truncated
                    write an image that ends before its partitions do (cut
                    short); refused without it
      --builtin-decoders
                    decode with Sluice's own decoders even where the system's
                    xz, zstd or bzip2 would be faster
      --no-verify   skip reading the drive back (not recommended)
      --no-eject    leave the drive attached afterwards (it is ejected by default)
      --yes         do not ask before erasing (required without a terminal)
      --json        progress and results as JSON lines on stdout
      --elevate sudo|pkexec
                    how to get root when not root already (default: sudo in a
                    terminal, pkexec otherwise; only the writing process runs as root)
  sluice verify IMAGE DEVICE [--json] [--elevate sudo|pkexec]
                                                compare a drive (or a file) with IMAGE, writing nothing
  sluice backup DRIVE FILE [options]            copy a whole drive into an image file, then verify
      --compress zstd|xz|gz
                    compress the image with the system's zstd, xz or gzip
      --trim-to-partitions
                    stop after the end of the last partition (a GPT's backup
                    header at the drive's end is left out)
      --no-verify, --yes (replace FILE), --json, --elevate as for flash
  sluice clone SOURCE_DRIVE TARGET_DRIVE [options]
                                                copy a whole drive onto another, then verify
      --no-verify, --no-eject, --yes, --json, --elevate as for flash

Exit codes: 0 success, 1 flash or verify failed, 2 usage error, 3 unsupported image format,
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
        'no-eject': { type: 'boolean', default: false },
        all: { type: 'boolean', default: false },
        virtual: { type: 'boolean', default: false },
        elevate: { type: 'string' },
        sha256: { type: 'string' },
        bmap: { type: 'string' },
        'no-bmap': { type: 'boolean', default: false },
        'allow-truncated': { type: 'boolean', default: false },
        'builtin-decoders': { type: 'boolean', default: false },
        compress: { type: 'string' },
        'trim-to-partitions': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
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
  if (sha256 !== undefined && !/^[0-9a-fA-F]{64}$/.test(sha256)) return usageError(`--sha256 takes the 64 hexadecimal digits of a SHA-256, not "${sha256}"`);
  if (values.bmap !== undefined && values['no-bmap']) return usageError('--bmap and --no-bmap exclude each other');
  const bmap = values['no-bmap'] ? false : values.bmap;
  const { elevate, compress } = values;
  if (elevate !== undefined && elevate !== 'sudo' && elevate !== 'pkexec') return usageError(`--elevate takes sudo or pkexec, not "${elevate}"`);
  if (compress !== undefined && !isCompression(compress)) return usageError(`--compress takes ${BACKUP_COMPRESSIONS.join(', ')}, not "${compress}"`);
  if (command !== 'backup' && (compress !== undefined || values['trim-to-partitions'])) return usageError('--compress and --trim-to-partitions are options of backup');
  if (command !== 'flash' && values['allow-truncated']) return usageError('--allow-truncated is an option of flash');
  // Each command's modules load only when it runs: `sluice --help` or a usage error need none of them.
  switch (command) {
    case 'info': {
      const [image, ...extra] = rest;
      if (image === undefined || extra.length > 0) return usageError('info needs exactly one IMAGE');
      return (await import('./commands/info.js')).infoCommand(image, { sha256, bmap, systemTools: !values['builtin-decoders'] }, values.json);
    }
    case 'list':
      return rest.length === 0 ? (await import('./commands/list.js')).listCommand({ showAll: values.all, showVirtual: values.virtual }, values.json) : usageError('list takes no arguments');
    case 'flash': {
      const [image, ...targets] = rest;
      if (image === undefined || targets.length === 0) return usageError('flash needs an IMAGE and at least one DEVICE');
      return (await import('./commands/flash.js')).flashCommand({ image, targets, sha256, bmap, systemTools: !values['builtin-decoders'], verify: !values['no-verify'], eject: !values['no-eject'], yes: values.yes, json: values.json, elevate, allowTruncated: values['allow-truncated'] });
    }
    case 'verify': {
      const [image, target, ...extra] = rest;
      if (image === undefined || target === undefined || extra.length > 0) return usageError('verify needs exactly one IMAGE and one DEVICE');
      return (await import('./commands/verify.js')).verifyCommand({ image, target, json: values.json, elevate });
    }
    case 'backup': {
      const [drive, file, ...extra] = rest;
      if (drive === undefined || file === undefined || extra.length > 0) return usageError('backup needs exactly one DRIVE and one FILE');
      return (await import('./commands/backup.js')).backupCommand({ drive, file, compress: compress ?? null, trimToPartitions: values['trim-to-partitions'], verify: !values['no-verify'], yes: values.yes, json: values.json, elevate });
    }
    case 'clone': {
      const [source, target, ...extra] = rest;
      if (source === undefined || target === undefined || extra.length > 0) return usageError('clone needs exactly one SOURCE_DRIVE and one TARGET_DRIVE');
      return (await import('./commands/clone.js')).cloneCommand({ source, target, verify: !values['no-verify'], eject: !values['no-eject'], yes: values.yes, json: values.json, elevate });
    }
    case undefined:
      return usageError('no command given');
    default:
      return usageError(`unknown command "${command}"`);
  }
}

process.exitCode = await main(process.argv.slice(2));
