import { useEffect, useState, type FormEvent } from 'react';
import type { ApiResult } from '../../../common/contracts/api-result.js';
import type { CacheView } from '../../../common/contracts/catalogue-view.js';
import type { Settings, SwitchSetting } from '../../../common/contracts/settings.js';
import { formatBytes } from '../../../common/domain/units.js';
import { Modal } from './Modal.js';
import { ErrorMessage } from './ErrorMessage.js';

const FIELDS: readonly { key: SwitchSetting; label: string; help: string }[] = [
  {
    key: 'verify',
    label: 'Verify after writing',
    help: 'Read every drive back and compare it with the image. Turning this off means a bad card goes unnoticed.',
  },
  {
    key: 'eject',
    label: 'Eject when done',
    help: 'Eject the drives after a successful flash, so they can be pulled out at once.',
  },
  {
    key: 'exact',
    label: 'Write every byte',
    help: 'Also write the free space of the image’s filesystems, so no old data stays on the card. Slower: most of an OS image is free space.',
  },
  {
    key: 'capacityCheck',
    label: 'Check for fake capacity',
    help: 'Test blocks past the image are written before it and read back after it: a card that holds less than it claims fails the flash.',
  },
  { key: 'notifications', label: 'Notify when done', help: 'A desktop notification when a flash ends.' },
  { key: 'showVirtual', label: 'Show virtual drives', help: 'List loop devices and attached disk images as targets.' },
];

/** The cache limit is set in whole gigabytes (decimal, as disks are sold). */
const GB = 1_000_000_000;

interface SettingsDialogProps {
  settings: Settings;
  /** Saves one change; resolves with an error sentence, or null when saved. */
  onChange: (patch: Partial<Settings>) => Promise<string | null>;
  /** The image cache: what it holds, and emptying it. */
  cache: { load: () => Promise<ApiResult<CacheView>>; clear: () => Promise<ApiResult<CacheView>> };
  onClose: () => void;
}

/** The OS catalogues "Choose OS" lists: add an address or a file's full path, remove one. */
function Repositories({ repositories, onChange }: { repositories: string[]; onChange: (next: string[]) => void }) {
  const [adding, setAdding] = useState('');
  const add = (event: FormEvent) => {
    event.preventDefault();
    const repository = adding.trim();
    if (repository === '' || repositories.includes(repository)) return;
    onChange([...repositories, repository]);
    setAdding('');
  };
  return (
    <section aria-label="OS catalogues">
      <h3>OS catalogues</h3>
      <p className="hint">
        Lists in Raspberry Pi Imager’s format (os_list v4), from any vendor: a web address, or the full path of a JSON
        file or .rpi-imager-manifest on this computer.
      </p>
      <ul className="repository-list">
        {repositories.map((repository) => (
          <li key={repository}>
            <span className="repository">{repository}</span>
            <button
              type="button"
              className="button quiet"
              aria-label={`Remove ${repository}`}
              onClick={() => onChange(repositories.filter((r) => r !== repository))}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      <form className="url-form" onSubmit={add}>
        <input
          type="text"
          aria-label="Catalogue address or file"
          placeholder="https://…/os_list_imagingutility_v4.json"
          value={adding}
          onChange={(event) => setAdding(event.target.value)}
        />
        <button type="submit" className="button" disabled={adding.trim() === ''}>
          Add
        </button>
      </form>
    </section>
  );
}

/** The image cache: where it is, what it holds, its limit, and a button that empties it. */
function ImageCacheSection({
  cache,
  limitBytes,
  onLimit,
}: {
  cache: SettingsDialogProps['cache'];
  limitBytes: number;
  onLimit: (bytes: number) => void;
}) {
  const [view, setView] = useState<CacheView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [limit, setLimit] = useState(String(Math.round(limitBytes / GB)));
  const show = (result: ApiResult<CacheView>) =>
    result.ok ? (setView(result.value), setError(null)) : setError(result.error.message);
  useEffect(() => void cache.load().then(show), [cache]);
  const total = view?.entries.reduce((sum, e) => sum + e.bytes, 0) ?? 0;
  return (
    <section aria-label="Image cache">
      <h3>Image cache</h3>
      {view !== null && (
        <>
          <p className="hint" data-testid="cache-summary">
            {view.entries.length === 0
              ? 'It holds no images'
              : `${view.entries.length} ${view.entries.length === 1 ? 'image' : 'images'}, ${formatBytes(total)}`}{' '}
            in {view.dir}
          </p>
          <ul className="cache-list">
            {view.entries.map((e) => (
              <li key={e.key}>
                {e.name ?? e.key.slice(0, 12)}: {formatBytes(e.bytes)}
                {!e.complete &&
                  ` (partial${e.size === null ? '' : `, ${Math.floor((100 * e.bytes) / Math.max(1, e.size))}%`}, resumed by the next download)`}
              </li>
            ))}
          </ul>
        </>
      )}
      <div className="actions">
        <label className="cache-limit">
          Keep at most{' '}
          <input
            type="number"
            min={0}
            step={1}
            aria-label="Cache limit in GB"
            value={limit}
            onChange={(event) => setLimit(event.target.value)}
            onBlur={() => {
              const gb = Number(limit);
              if (Number.isInteger(gb) && gb >= 0) onLimit(gb * GB);
            }}
          />{' '}
          GB (the least recently used go first; 5 GB of the disk always stay free)
        </label>
        <button
          type="button"
          className="button"
          disabled={view === null || view.entries.length === 0}
          onClick={() => void cache.clear().then(show)}
        >
          Clear cache
        </button>
      </div>
      <ErrorMessage error={error} />
    </section>
  );
}

/** The settings panel: each change shows at once and is saved as it is made; a failed save puts it back. */
export function SettingsDialog({ settings, onChange, cache, onClose }: SettingsDialogProps) {
  const [shown, setShown] = useState(settings);
  const [error, setError] = useState<string | null>(null);
  const change = (patch: Partial<Settings>): void => {
    const before = shown;
    setShown((current) => ({ ...current, ...patch }));
    void onChange(patch).then((problem) => {
      setError(problem);
      if (problem !== null) setShown(before);
    });
  };
  return (
    <Modal
      title="Settings"
      onClose={onClose}
      className="settings"
      footer={
        <button type="button" className="button primary" onClick={onClose}>
          Done
        </button>
      }
    >
      <ul className="settings-list">
        {FIELDS.map(({ key, label, help }) => (
          <li key={key}>
            <label className="toggle">
              <input
                type="checkbox"
                checked={shown[key]}
                aria-describedby={`setting-${key}-help`}
                onChange={(event) => change({ [key]: event.target.checked })}
              />
              {label}
            </label>
            <p className="hint" id={`setting-${key}-help`}>
              {help}
            </p>
          </li>
        ))}
      </ul>
      <Repositories repositories={shown.repositories} onChange={(repositories) => change({ repositories })} />
      <ImageCacheSection
        cache={cache}
        limitBytes={shown.cacheLimitBytes}
        onLimit={(cacheLimitBytes) => change({ cacheLimitBytes })}
      />
      <ErrorMessage error={error} />
    </Modal>
  );
}
