import { describe, expect, it } from 'vitest';
import type { CatalogueView } from '../../common/contracts/catalogue-view.js';
import type { BoardFilter, CatalogueCategory, CatalogueOs } from '../../common/domain/catalogue.js';
import {
  childRows,
  documentRows,
  searchRows,
  unreadCategories,
  visibleRows,
  type Row,
} from '../../renderer/src/catalogue-rows.js';

function os(name: string, devices: string[] | null): CatalogueOs {
  return {
    kind: 'os',
    name,
    description: `${name} for tests`,
    icon: null,
    url: `https://x/${name}.img.xz`,
    releaseDate: '2026-11-01',
    extractSize: 1,
    extractSha256: 'a'.repeat(64),
    downloadSize: 1,
    downloadSha256: null,
    devices,
    initFormat: null,
    architecture: null,
    website: null,
    bmapUrl: null,
  };
}

function category(
  name: string,
  items: CatalogueCategory['items'],
  subitemsUrl: string | null = null,
): CatalogueCategory {
  return { kind: 'category', name, description: '', icon: null, website: null, items, subitemsUrl };
}

function view(source: string, items: CatalogueView['items']): CatalogueView {
  return { source, boards: [], items, notes: [], offline: null, cached: [] };
}

const top = view('https://x/top.json', [
  os('Lite', ['pi4']),
  category('Inline', [os('Nested', ['pi5']), category('Deeper', [os('Deepest', null)])]),
  category('Remote', null, 'https://x/remote.json'),
]);
const remote = view('https://x/remote.json', [os('Far', ['pi4']), os('Far Desktop', ['pi5'])]);
const exclusive4: BoardFilter = { tags: ['pi4'], inclusive: false };
const inclusive5: BoardFilter = { tags: ['pi5'], inclusive: true };
const names = (rows: readonly Row[]) => rows.map((r) => r.item.name);

describe('the Choose OS list: rows, board filter, search', () => {
  it('gives each row its document and its path there, inline categories included', () => {
    const rows = documentRows(top);
    const inline = rows[1] as Row;
    const deeper = (childRows(inline, new Map()) as Row[])[1] as Row;
    expect(childRows(deeper, new Map())?.[0]).toMatchObject({
      source: top.source,
      path: ['Inline', 'Deeper', 'Deepest'],
      above: ['Inline', 'Deeper'],
    });
    // A category in another document: unknown until read, then that document's rows.
    const far = rows[2] as Row;
    expect(childRows(far, new Map())).toBeNull();
    expect(childRows(far, new Map([[remote.source, remote]]))?.[0]).toMatchObject({
      source: remote.source,
      path: ['Far'],
      above: ['Remote'],
    });
  });

  it('filters as Imager does, keeping categories with a match inside and those not read yet', () => {
    const rows = documentRows(top);
    expect(names(visibleRows(rows, null, new Map()))).toEqual(['Lite', 'Inline', 'Remote']);
    // pi4, exclusive: Inline holds nothing for it (Deepest names no boards); Remote is not read yet.
    expect(names(visibleRows(rows, exclusive4, new Map()))).toEqual(['Lite', 'Remote']);
    // pi5, inclusive: Deepest (no boards named) counts; Remote, read, holds Far Desktop.
    expect(names(visibleRows(rows, inclusive5, new Map([[remote.source, remote]])))).toEqual(['Inline', 'Remote']);
    expect(names(visibleRows(rows, { tags: ['pi3'], inclusive: false }, new Map([[remote.source, remote]])))).toEqual(
      [],
    );
  });

  it('searches every document read, by name or description, ignoring case, within the board filter', () => {
    const documents = new Map([[remote.source, remote]]);
    const rows = documentRows(top);
    expect(searchRows(rows, 'far', null, documents).map((r) => [r.item.name, r.above.join('/')])).toEqual([
      ['Far', 'Remote'],
      ['Far Desktop', 'Remote'],
    ]);
    expect(names(searchRows(rows, 'DEEPEST FOR', null, documents))).toEqual(['Deepest']);
    expect(names(searchRows(rows, 'far', exclusive4, documents))).toEqual(['Far']);
    expect(unreadCategories(rows, new Map())).toEqual([remote.source]);
    expect(unreadCategories(rows, documents)).toEqual([]);
  });
});
