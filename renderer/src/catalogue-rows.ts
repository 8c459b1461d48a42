/**
 * The "Choose OS" list's logic, apart from its looks: the rows of a level of the catalogue, what
 * a board filter keeps, and a search by name through every document read so far. A row knows the
 * document it was read from and its place in it, which is how the main process is told what was
 * chosen (it looks the entry up in what it read itself).
 */
import type { CatalogueView } from '../../common/contracts/catalogue-view.js';
import { boardMatches, type BoardFilter, type CatalogueItem, type CatalogueOs } from '../../common/domain/catalogue.js';

export interface Row {
  item: CatalogueItem;
  /** The document it was read from. */
  source: string;
  /** Its place in that document: the inline categories above it, then its own name. */
  path: string[];
  /** The names of every category above it, from the top of the list: where it sits, for a search's results. */
  above: string[];
}

export type Documents = ReadonlyMap<string, CatalogueView>;

/** The rows of a document's top level. */
export function documentRows(view: CatalogueView, above: readonly string[] = []): Row[] {
  return view.items.map((item) => ({ item, source: view.source, path: [item.name], above: [...above] }));
}

/** What a category holds; null while its document (subitems_url) has not been read. */
export function childRows(row: Row, documents: Documents): Row[] | null {
  const { item } = row;
  if (item.kind !== 'category') return [];
  const above = [...row.above, item.name];
  if (item.items !== null)
    return item.items.map((child) => ({ item: child, source: row.source, path: [...row.path, child.name], above }));
  const document = item.subitemsUrl === null ? undefined : documents.get(item.subitemsUrl);
  return document === undefined ? null : documentRows(document, above);
}

/**
 * The rows a board filter keeps: entries that run on it (Imager's rule, common/domain/catalogue.ts),
 * and categories with such an entry inside; a category not read yet stays, since what it holds is
 * not known.
 */
export function visibleRows(rows: readonly Row[], filter: BoardFilter | null, documents: Documents): Row[] {
  if (filter === null) return [...rows];
  return rows.filter((row) => {
    if (row.item.kind === 'os') return boardMatches(row.item, filter);
    const children = childRows(row, documents);
    return children === null || visibleRows(children, filter, documents).length > 0;
  });
}

/** Every entry under `rows` (in the documents read so far) whose name or description holds `text`, ignoring case. */
export function searchRows(
  rows: readonly Row[],
  text: string,
  filter: BoardFilter | null,
  documents: Documents,
): (Row & { item: CatalogueOs })[] {
  const wanted = text.trim().toLowerCase();
  const found: (Row & { item: CatalogueOs })[] = [];
  for (const row of visibleRows(rows, filter, documents)) {
    const { item } = row;
    if (item.kind === 'os') {
      if (item.name.toLowerCase().includes(wanted) || item.description.toLowerCase().includes(wanted))
        found.push({ ...row, item });
    } else {
      found.push(...searchRows(childRows(row, documents) ?? [], text, filter, documents));
    }
  }
  return found;
}

/** Categories whose document has not been read yet, under `rows` (a search reads them, to search everything). */
export function unreadCategories(rows: readonly Row[], documents: Documents): string[] {
  return rows.flatMap((row) => {
    if (row.item.kind !== 'category') return [];
    const children = childRows(row, documents);
    if (children === null) return row.item.subitemsUrl === null ? [] : [row.item.subitemsUrl];
    return unreadCategories(children, documents);
  });
}
