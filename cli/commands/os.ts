import {
  boardFilter,
  cacheKey,
  filterItems,
  pathText,
  placedEntries,
  type BoardFilter,
  type CatalogueBoard,
  type CatalogueDocument,
} from '../../common/domain/catalogue.js';
import { JobError } from '../../common/domain/failure.js';
import { formatBytes } from '../../common/domain/units.js';
import { imageCache, readRepositories, repositories } from '../catalogue.js';
import { EXIT } from '../exit-codes.js';

export interface OsArgs {
  /** --repo, as given: Raspberry Pi's list when none. */
  repos: readonly string[] | undefined;
  /** --device: a board's name or one of its tags. */
  device?: string | undefined;
  json: boolean;
}

/** Reads the repositories (the whole tree), or says why not and returns the exit code. */
async function read(named: readonly string[] | undefined): Promise<CatalogueDocument[] | number> {
  try {
    return await readRepositories(repositories(named), true);
  } catch (error) {
    if (!(error instanceof JobError)) throw error;
    process.stderr.write(`sluice: ${error.message}\n`);
    return EXIT.failed;
  }
}

/**
 * The filter --device names: a board by its name (any case) or by one of its tags; else a tag some
 * entry names, matched as Imager's exclusive filter does. Null when it names nothing the catalogue knows.
 */
function filterFor(
  device: string,
  boards: readonly CatalogueBoard[],
  documents: readonly CatalogueDocument[],
): BoardFilter | null {
  const board =
    boards.find((b) => b.name.toLowerCase() === device.toLowerCase()) ?? boards.find((b) => b.tags.includes(device));
  if (board !== undefined) return boardFilter(board);
  const named = documents.some((d) => placedEntries(d.items).some((e) => e.os.devices?.includes(device) === true));
  return named ? { tags: [device], inclusive: false } : null;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `sluice os list [--repo URL|FILE]... [--device BOARD] [--json]`: every entry, with its path in the category tree. */
export async function osListCommand(args: OsArgs): Promise<number> {
  const documents = await read(args.repos);
  if (typeof documents === 'number') return documents;
  const boards = documents.flatMap((d) => d.boards);
  let filter: BoardFilter | null = null;
  if (args.device !== undefined) {
    filter = filterFor(args.device, boards, documents);
    if (filter === null) {
      process.stderr.write(
        `sluice: the catalogue has no board or device tag "${args.device}"; its boards: ${boards.map((b) => b.name).join(', ') || 'none'} (sluice os boards lists them with their tags).\n`,
      );
      return EXIT.usage;
    }
  }
  const complete = new Set((await imageCache().entries()).filter((e) => e.complete).map((e) => e.key));
  const entries = documents
    .flatMap((d) => placedEntries(filterItems(d.items, filter)))
    .map((e) => ({ ...e, cached: complete.has(cacheKey(e.os)) }));
  if (args.json) {
    const offline = documents.filter((d) => d.offline !== null).map((d) => ({ source: d.source, ...d.offline }));
    process.stdout.write(
      `${JSON.stringify({ entries: entries.map((e) => ({ path: e.path, ...e.os, cached: e.cached })), offline })}\n`,
    );
    return EXIT.ok;
  }
  if (entries.length === 0) {
    process.stdout.write(`No entries${args.device === undefined ? '' : ` for ${args.device}`}.\n`);
    return EXIT.ok;
  }
  const rows = entries.map((e) => [
    pathText(e.path),
    e.os.releaseDate,
    formatBytes(e.os.downloadSize),
    formatBytes(e.os.extractSize),
    e.cached ? 'cached' : '',
  ]);
  process.stdout.write(`${table(['ENTRY', 'RELEASED', 'DOWNLOAD', 'WRITES', ''], rows)}\n`);
  return EXIT.ok;
}

/** `sluice os boards [--repo URL|FILE]... [--json]`: the boards the catalogue filters by. */
export async function osBoardsCommand(args: OsArgs): Promise<number> {
  const documents = await read(args.repos);
  if (typeof documents === 'number') return documents;
  const boards = documents.flatMap((d) => d.boards);
  if (args.json) {
    process.stdout.write(`${JSON.stringify(boards, null, 2)}\n`);
    return EXIT.ok;
  }
  if (boards.length === 0) {
    process.stdout.write('The catalogue names no boards (--device still takes a tag its entries name).\n');
    return EXIT.ok;
  }
  process.stdout.write(
    `${table(
      ['BOARD', 'TAGS', 'MATCHING'],
      boards.map((b) => [b.name, b.tags.join(','), b.matchingType]),
    )}\n`,
  );
  return EXIT.ok;
}
