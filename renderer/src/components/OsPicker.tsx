import { useEffect, useMemo, useState } from 'react';
import type { ApiResult } from '../../../common/contracts/api-result.js';
import type { CatalogueView } from '../../../common/contracts/catalogue-view.js';
import { boardFilter, cacheKey, type CatalogueBoard, type CatalogueOs } from '../../../common/domain/catalogue.js';
import { formatBytes } from '../../../common/domain/units.js';
import { childRows, documentRows, searchRows, unreadCategories, visibleRows, type Row } from '../catalogue-rows.js';
import { Modal } from './Modal.js';
import { ErrorMessage } from './ErrorMessage.js';

interface OsPickerProps {
  /** The catalogues in the settings, in order. */
  repositories: string[];
  read: (source: string) => Promise<ApiResult<CatalogueView>>;
  onChoose: (source: string, path: string[]) => void;
  onClose: () => void;
}

function savedOn(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 16);
}

function OsRow({
  os,
  cached,
  where,
  onChoose,
}: {
  os: CatalogueOs;
  cached: boolean;
  where: string | null;
  onChoose: () => void;
}) {
  return (
    <button type="button" className="os-row" onClick={onChoose} data-testid="os-entry">
      {os.icon === null ? (
        <span className="os-icon" />
      ) : (
        <img className="os-icon" src={os.icon} alt="" width={32} height={32} />
      )}
      <span className="os-text">
        <span className="os-name">
          {os.name}
          {cached && <span className="badge note">Cached</span>}
        </span>
        {where !== null && <span className="muted">{where}</span>}
        <span className="os-description">{os.description}</span>
        <span className="muted">
          Released {os.releaseDate} · {formatBytes(os.downloadSize)} download · writes {formatBytes(os.extractSize)}
        </span>
      </span>
    </button>
  );
}

/**
 * "Choose OS": the catalogues' entries by category, filtered by board, searched by name, with the
 * cached ones marked. A category whose entries are in another document is read when it is opened
 * (or when a search needs it).
 */
export function OsPicker({ repositories, read, onChoose, onClose }: OsPickerProps) {
  const [documents, setDocuments] = useState<Map<string, CatalogueView>>(new Map());
  const [errors, setErrors] = useState<Map<string, string>>(new Map());
  const [reading, setReading] = useState<Set<string>>(new Set());
  /** The categories opened, from the top. */
  const [opened, setOpened] = useState<Row[]>([]);
  const [boardName, setBoardName] = useState('');
  const [search, setSearch] = useState('');

  const load = (source: string): void => {
    setReading((current) => new Set(current).add(source));
    void read(source).then((result) => {
      setReading((current) => {
        const next = new Set(current);
        next.delete(source);
        return next;
      });
      if (result.ok) setDocuments((current) => new Map(current).set(source, result.value));
      else setErrors((current) => new Map(current).set(source, result.error.message));
    });
  };

  useEffect(() => {
    repositories.forEach(load);
    // Read once when the picker opens; the settings page changes the repositories while it is closed.
  }, []);

  const tops = repositories.map((source) => documents.get(source)).filter((d) => d !== undefined);
  const boards: CatalogueBoard[] = tops.flatMap((d) => d.boards);
  const board = boards.find((b) => b.name === boardName) ?? null;
  const filter = board === null ? null : boardFilter(board);
  const cached = useMemo(() => new Set([...documents.values()].flatMap((d) => d.cached)), [documents]);
  const topRows = tops.flatMap((d) => documentRows(d));
  const current = opened.at(-1);
  const levelRows = current === undefined ? topRows : childRows(current, documents);
  const searching = search.trim() !== '';

  // A search looks through every document: those not read yet are read now.
  useEffect(() => {
    if (!searching) return;
    for (const source of unreadCategories(topRows, documents))
      if (!reading.has(source) && !errors.has(source)) load(source);
  });

  const open = (row: Row): void => {
    if (row.item.kind !== 'category') return;
    if (childRows(row, documents) === null && row.item.subitemsUrl !== null) load(row.item.subitemsUrl);
    setOpened((current) => [...current, row]);
  };

  const offline = [...documents.values()].find((d) => d.offline !== null)?.offline ?? null;
  const notes = [...documents.values()].flatMap((d) => d.notes);
  const problems = [...errors.values()];

  const list = (rows: readonly Row[], where: boolean) => (
    <ul className="os-list" aria-label="Operating systems">
      {rows.map((row) => (
        <li key={`${row.source}\n${row.path.join('\n')}`}>
          {row.item.kind === 'os' ? (
            <OsRow
              os={row.item}
              cached={cached.has(cacheKey(row.item))}
              where={where ? row.above.join(' › ') || null : null}
              onChoose={() => onChoose(row.source, row.path)}
            />
          ) : (
            <button type="button" className="os-row category" onClick={() => open(row)} data-testid="os-category">
              {row.item.icon === null ? (
                <span className="os-icon" />
              ) : (
                <img className="os-icon" src={row.item.icon} alt="" width={32} height={32} />
              )}
              <span className="os-text">
                <span className="os-name">{row.item.name} ›</span>
                <span className="os-description">{row.item.description}</span>
              </span>
            </button>
          )}
        </li>
      ))}
    </ul>
  );

  let body;
  if (searching) {
    const found = searchRows(topRows, search, filter, documents);
    body =
      found.length === 0 ? (
        <p className="empty">{reading.size > 0 ? 'Searching…' : `Nothing is called “${search.trim()}”.`}</p>
      ) : (
        list(found, true)
      );
  } else if (levelRows === null) {
    body = <p className="empty">Reading…</p>;
  } else {
    const rows = visibleRows(levelRows, filter, documents);
    body =
      rows.length === 0 ? (
        <p className="empty">
          {reading.size > 0
            ? 'Reading the catalogue…'
            : board === null
              ? 'This catalogue lists nothing.'
              : `Nothing here runs on ${board.name}.`}
        </p>
      ) : (
        list(rows, false)
      );
  }

  return (
    <Modal
      title="Choose OS"
      onClose={onClose}
      className="os-picker"
      footer={
        <button type="button" className="button" onClick={onClose}>
          Cancel
        </button>
      }
    >
      {offline !== null && (
        <p className="message notice" data-testid="catalogue-offline">
          Offline: showing the list saved on {savedOn(offline.savedAt)} UTC ({offline.reason.replace(/\.$/, '')}).
          Cached images flash without a network.
        </p>
      )}
      <div className="os-filters">
        <select aria-label="Board" value={boardName} onChange={(event) => setBoardName(event.target.value)}>
          <option value="">All boards</option>
          {boards.map((b) => (
            <option key={b.name} value={b.name}>
              {b.name}
            </option>
          ))}
        </select>
        <input
          type="search"
          aria-label="Search by name"
          placeholder="Search by name"
          value={search}
          onChange={(event) => setSearch(event.target.value)}
        />
      </div>
      {!searching && opened.length > 0 && (
        <nav className="os-trail" aria-label="Category">
          <button type="button" className="link-button" onClick={() => setOpened([])}>
            All
          </button>
          {opened.map((row, index) => (
            <span key={index}>
              {' › '}
              <button type="button" className="link-button" onClick={() => setOpened(opened.slice(0, index + 1))}>
                {row.item.name}
              </button>
            </span>
          ))}
        </nav>
      )}
      {body}
      {problems.map((problem) => (
        <ErrorMessage key={problem} error={problem} />
      ))}
      {notes.length > 0 && (
        <details className="hint" data-testid="catalogue-notes">
          <summary>
            {notes.length} {notes.length === 1 ? 'entry was' : 'entries were'} skipped: not in the catalogue format
          </summary>
          <ul>
            {notes.map((note) => (
              <li key={note}>{note}</li>
            ))}
          </ul>
        </details>
      )}
    </Modal>
  );
}
