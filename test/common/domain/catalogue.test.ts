import { describe, expect, it } from 'vitest';
import {
  boardFilter,
  filterItems,
  findEntry,
  pathText,
  placedEntries,
  type CatalogueBoard,
  type CatalogueCategory,
  type CatalogueItem,
  type CatalogueOs,
} from '../../../common/domain/catalogue.js';

function os(name: string, devices: string[] | null): CatalogueOs {
  return {
    kind: 'os',
    name,
    description: '',
    icon: null,
    url: `https://x/${name}.img.xz`,
    releaseDate: '',
    extractSize: 1,
    extractSha256: '0'.repeat(64),
    downloadSize: 1,
    downloadSha256: null,
    devices,
    initFormat: null,
    architecture: null,
    website: null,
    bmapUrl: null,
  };
}

function category(name: string, items: CatalogueItem[] | null): CatalogueCategory {
  return {
    kind: 'category',
    name,
    description: '',
    icon: null,
    website: null,
    items,
    subitemsUrl: items === null ? `https://x/${name}.json` : null,
  };
}

function board(tags: string[], matchingType: CatalogueBoard['matchingType']): CatalogueBoard {
  return { name: tags.join('+'), description: '', icon: null, tags, matchingType, architecture: null };
}

const TREE: CatalogueItem[] = [
  os('For A', ['a']),
  os('For A and B', ['a', 'b']),
  os('For every board', null),
  os('For no board', []),
  category('Only B inside', [os('For B', ['b'])]),
  category('Not read yet', null),
  category('Nested', [category('Deeper', [os('For A deep', ['a'])])]),
];

const names = (items: CatalogueItem[]): string[] =>
  items.map((i) =>
    i.kind === 'category' ? `${i.name}: [${i.items === null ? 'unread' : names(i.items).join(', ')}]` : i.name,
  );

describe('filterItems: Imager’s board filter', () => {
  it('exclusive: only entries naming one of the board’s tags; categories left empty go, unread ones stay', () => {
    expect(names(filterItems(TREE, boardFilter(board(['a'], 'exclusive'))))).toEqual([
      'For A',
      'For A and B',
      'Not read yet: [unread]',
      'Nested: [Deeper: [For A deep]]',
    ]);
  });

  it('inclusive: also entries that name no boards, but not those naming an empty list', () => {
    expect(names(filterItems(TREE, boardFilter(board(['b'], 'inclusive'))))).toEqual([
      'For A and B',
      'For every board',
      'Only B inside: [For B]',
      'Not read yet: [unread]',
    ]);
  });

  it('no filter keeps everything', () => {
    expect(filterItems(TREE, null)).toEqual(TREE);
  });
});

describe('findEntry: by path in the tree, or by a name only one entry has', () => {
  const entries = placedEntries([
    ...TREE,
    category('Copies', [os('For A', ['a']), os('Twice', null)]),
    os('Twice', null),
  ]);

  it('lists every entry read so far with its path', () => {
    expect(entries.map((e) => pathText(e.path))).toEqual([
      'For A',
      'For A and B',
      'For every board',
      'For no board',
      'Only B inside/For B',
      'Nested/Deeper/For A deep',
      'Copies/For A',
      'Copies/Twice',
      'Twice',
    ]);
  });

  it('finds by exact path first, then by unique name, and says when a name is ambiguous or missing', () => {
    expect(findEntry(entries, 'Nested/Deeper/For A deep')).toMatchObject({ path: ['Nested', 'Deeper', 'For A deep'] });
    expect(findEntry(entries, 'For A deep')).toMatchObject({ path: ['Nested', 'Deeper', 'For A deep'] });
    // "For A" is a whole path at the top, so the path wins over the other entry of that name.
    expect(findEntry(entries, 'For A')).toMatchObject({ path: ['For A'] });
    expect(findEntry(entries, 'Copies/Twice')).toMatchObject({ path: ['Copies', 'Twice'] });
    expect(findEntry(entries, 'Nope')).toEqual({ missing: true });
    expect(findEntry(entries, 'For B')).toMatchObject({ path: ['Only B inside', 'For B'] });
  });

  it('refuses a name that two entries have when neither path is it', () => {
    const twice = placedEntries([category('One', [os('Same', null)]), category('Two', [os('Same', null)])]);
    expect(findEntry(twice, 'Same')).toEqual({ ambiguous: ['One/Same', 'Two/Same'] });
  });
});
