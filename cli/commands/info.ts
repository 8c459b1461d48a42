import { cutShortFailure } from '../../common/domain/cut-short.js';
import { discSummary } from '../../common/domain/disc.js';
import { formatBytes } from '../../common/domain/units.js';
import type { ImageInfo } from '../../common/domain/image.js';
import { EXIT } from '../exit-codes.js';
import { describeSize } from '../render.js';
import { OS_PREFIX } from '../../common/domain/catalogue.js';
import { prepareCliCatalogueImage, prepareCliImage } from './prepare-cli-image.js';

function describe(info: ImageInfo): string {
  const lines = [
    `${info.name}`,
    `  format:           ${info.format}`,
    `  stored size:      ${info.sourceSize === null ? 'not given by the server' : `${formatBytes(info.sourceSize)} (${info.sourceSize} bytes)`}`,
    `  image size:       ${describeSize(info)}${info.size === null ? '' : ` (${info.sizeExact ? '' : 'at least '}${info.size} bytes${info.sizeExact ? '' : ', from the gzip trailer, which gives the size modulo 4 GiB'})`}`,
  ];
  if (info.entry !== null) lines.push(`  zip entry:        ${info.entry.choice ?? info.entry.name}`);
  const table = info.partitionTable;
  if (table === null) lines.push('  partition table:  not readable without decoding');
  else {
    lines.push(`  partition table:  ${table.type === 'none' ? 'none found' : table.type.toUpperCase()}`);
    for (const p of table.partitions) {
      lines.push(
        `    ${String(p.number).padStart(2)}  ${formatBytes(p.size).padStart(8)} at ${p.offset}  ${p.type}${p.label === null ? '' : `  "${p.label}"`}`,
      );
    }
  }
  if (info.disc !== null) {
    lines.push(`  boots from:       ${discSummary(info.disc)}`);
    if (info.disc.problem !== null)
      lines.push(`                    (its files could not all be read: ${info.disc.problem})`);
  }
  const map = info.blockMap;
  lines.push(
    `  block map:        ${map === null ? 'none' : `${map.from}: ${formatBytes(map.mappedBytes)} mapped in ${map.ranges} ranges; only those are written and verified`}`,
  );
  lines.push(
    `  checksum:         ${info.checksum === null ? 'none' : `SHA-256 ${info.checksum.sha256} (from ${info.checksum.from})`}`,
  );
  lines.push(
    `  customisation:    ${info.customisationNote === null ? 'not looked for' : `${info.customisation ?? 'none'}: ${info.customisationNote}`}`,
  );
  const cutShort = cutShortFailure(info);
  if (cutShort !== null) lines.push(`  problem:          ${cutShort.message}`);
  return lines.join('\n');
}

/**
 * `sluice info IMAGE|os:ENTRY [--sha256 HEX] [--bmap FILE | --no-bmap] [--repo URL] [--json]`: what
 * Sluice would write, without writing anything. A catalogue entry is probed from the image cache
 * when it holds it, else from its web address, and nothing is kept.
 */
export async function infoCommand(
  image: string,
  options: {
    sha256?: string | undefined;
    bmap?: string | false | undefined;
    systemTools: boolean;
    repos?: readonly string[] | undefined;
  },
  json: boolean,
): Promise<number> {
  const { repos, ...probeOptions } = options;
  const catalogue = image.startsWith(OS_PREFIX)
    ? await prepareCliCatalogueImage(
        image.slice(OS_PREFIX.length),
        { repos, cache: true },
        options.systemTools,
        undefined,
        'info',
      )
    : null;
  if (typeof catalogue === 'number') return catalogue;
  const prepared = catalogue?.prepared ?? (await prepareCliImage({ image, ...probeOptions }));
  if (typeof prepared === 'number') return prepared;
  process.stdout.write(`${json ? JSON.stringify(prepared.info) : describe(prepared.info)}\n`);
  return EXIT.ok;
}
