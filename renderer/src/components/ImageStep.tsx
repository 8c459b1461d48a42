import { useState, type FormEvent } from 'react';
import type { ImageInfo } from '../../../common/domain/image.js';
import type { DriveInfo } from '../../../common/contracts/app-models.js';
import { formatBytes } from '../../../common/domain/units.js';
import { discSummary } from '../../../common/domain/disc.js';
import { FORMAT_LABEL, PARTITION_TABLE_LABEL } from '../labels.js';
import { ImageIcon } from './Icons.js';
import { StepCard } from './StepCard.js';
import type { Profile } from '../../../common/domain/customisation.js';
import { customisationSummary, METHOD_LABEL } from '../customise-form.js';
import { ErrorMessage } from './ErrorMessage.js';

interface ImageStepProps {
  image: ImageInfo | null;
  busy: boolean;
  error: string | null;
  onChoose: () => void;
  onOpenUrl: (url: string) => void;
  /** Opens "Choose OS": an entry of the catalogues in the settings. */
  onChooseOs: () => void;
  /** Drives that can be copied (a clone): those the picker would show. */
  sourceDrives: DriveInfo[];
  onChooseSourceDrive: (device: string) => void;
  onClear: () => void;
  /** The customisation the next flash writes. */
  customise: Profile | null;
  onCustomise: () => void;
}

/** What the drive receives: exact, "at least" for a lower bound (gzip's trailer), or unknown. */
function writesText(image: ImageInfo): string {
  if (image.size === null) return 'Known once decompressed';
  return image.sizeExact ? formatBytes(image.size) : `at least ${formatBytes(image.size)}`;
}

function partitionsText(image: ImageInfo): string {
  const table = image.partitionTable;
  if (table === null)
    return image.origin === 'url' && image.format !== 'raw' ? 'Read once downloaded' : 'Could not be read';
  const names = table.partitions.map((p) => `${p.label ?? p.type} (${formatBytes(p.size)})`);
  return names.length === 0
    ? PARTITION_TABLE_LABEL[table.type]
    : `${PARTITION_TABLE_LABEL[table.type]}: ${names.join(', ')}`;
}

function ImageDetails({ image }: { image: ImageInfo }) {
  return (
    <dl className="facts" aria-label="Image details">
      <dt>{image.origin === 'url' ? 'Download' : 'Size'}</dt>
      <dd>{image.sourceSize === null ? 'Not given by the server' : formatBytes(image.sourceSize)}</dd>
      <dt>Writes</dt>
      <dd data-testid="image-writes">{writesText(image)}</dd>
      <dt>Format</dt>
      <dd data-testid="image-format">
        {image.origin === 'drive' ? 'Whole drive, copied bit for bit' : FORMAT_LABEL[image.format]}
        {image.entry !== null &&
          `: ${image.entry.name}${image.entry.choice === null ? '' : ` (${image.entry.choice})`}`}
      </dd>
      <dt>Partitions</dt>
      <dd data-testid="image-partitions">{partitionsText(image)}</dd>
      {image.disc !== null && (
        <>
          <dt>Boots from</dt>
          <dd data-testid="image-disc">{discSummary(image.disc)}</dd>
        </>
      )}
      {image.blockMap !== null && (
        <>
          <dt>Block map</dt>
          <dd data-testid="image-block-map">
            {formatBytes(image.blockMap.mappedBytes)} mapped, only that is written and verified ({image.blockMap.from})
          </dd>
        </>
      )}
      {image.checksum !== null && (
        <>
          <dt>Checksum</dt>
          <dd data-testid="image-checksum">SHA-256 checked while writing ({image.checksum.from})</dd>
        </>
      )}
    </dl>
  );
}

/** Whether and how the image can be customised, what is set, and the way to the Customise dialog. Nothing for an image not looked at (a download, a drive). */
function CustomisationRow({
  image,
  customise,
  busy,
  onCustomise,
}: {
  image: ImageInfo;
  customise: Profile | null;
  busy: boolean;
  onCustomise: () => void;
}) {
  // A drive is copied bit for bit; a download's boot partition is read only when asked (it costs a download of its start).
  const notLookedAt = image.customisation === null && image.customisationNote === null;
  if (notLookedAt && image.origin !== 'url') return null;
  const offer =
    image.customisation !== null
      ? `Can be customised: ${METHOD_LABEL[image.customisation]}.`
      : notLookedAt
        ? 'Can be customised if it has a first-boot method: Sluice looks when you customise it.'
        : 'Cannot be customised: no first-boot method found.';
  return (
    <div className="customisation">
      <p data-testid="image-customisation">
        {customise === null ? offer : `Customised: ${customisationSummary(customise)}.`}
      </p>
      <button type="button" className="button" onClick={onCustomise} disabled={busy}>
        Customise…
      </button>
    </div>
  );
}

/** An http(s) address to flash from; the main process checks it again and probes it. */
function UrlForm({ busy, onOpenUrl }: { busy: boolean; onOpenUrl: (url: string) => void }) {
  const [url, setUrl] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (url.trim() !== '') onOpenUrl(url.trim());
  };
  return (
    <form className="url-form" onSubmit={submit}>
      <input
        type="url"
        aria-label="Image address"
        placeholder="https://…/image.img.xz"
        value={url}
        onChange={(event) => setUrl(event.target.value)}
        disabled={busy}
        required
      />
      <button type="submit" className="button" disabled={busy || url.trim() === ''}>
        Open
      </button>
    </form>
  );
}

/** A drive to copy onto others (a clone). */
function SourceDriveForm({
  busy,
  drives,
  onChoose,
}: {
  busy: boolean;
  drives: DriveInfo[];
  onChoose: (device: string) => void;
}) {
  const [device, setDevice] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (device !== '') onChoose(device);
  };
  return (
    <form className="url-form" onSubmit={submit}>
      <select
        aria-label="Drive to copy"
        value={device}
        onChange={(event) => setDevice(event.target.value)}
        disabled={busy}
      >
        <option value="">{drives.length === 0 ? 'No drives to copy' : 'Choose the drive to copy…'}</option>
        {drives.map((d) => (
          <option key={d.device} value={d.device}>
            {`${d.description || 'Unnamed drive'}, ${d.size === null ? 'size unknown' : formatBytes(d.size)} (${d.device})`}
          </option>
        ))}
      </select>
      <button type="submit" className="button" disabled={busy || device === ''}>
        Copy
      </button>
    </form>
  );
}

/** Step 1: the image, chosen with the native dialog, dropped anywhere on the window, picked from an OS catalogue, given as a web address, or a drive to clone. */
export function ImageStep({
  image,
  busy,
  error,
  onChoose,
  onOpenUrl,
  onChooseOs,
  sourceDrives,
  onChooseSourceDrive,
  onClear,
  customise,
  onCustomise,
}: ImageStepProps) {
  const [asking, setAsking] = useState<'url' | 'drive' | null>(null);
  return (
    <StepCard number={1} title="Image" icon={<ImageIcon className="step-icon" />} done={image !== null}>
      {image === null ? (
        <>
          <button type="button" className="button primary" onClick={onChoose} disabled={busy}>
            {busy ? 'Opening…' : 'Choose image…'}
          </button>
          <p className="hint">or drop an image file anywhere in this window</p>
          {asking === 'url' && <UrlForm busy={busy} onOpenUrl={onOpenUrl} />}
          {asking === 'drive' && <SourceDriveForm busy={busy} drives={sourceDrives} onChoose={onChooseSourceDrive} />}
          {asking === null && (
            <div className="actions">
              <button type="button" className="button quiet" onClick={onChooseOs} disabled={busy}>
                Choose OS…
              </button>
              <button type="button" className="button quiet" onClick={() => setAsking('url')} disabled={busy}>
                Flash from URL…
              </button>
              <button type="button" className="button quiet" onClick={() => setAsking('drive')} disabled={busy}>
                Clone a drive…
              </button>
            </div>
          )}
        </>
      ) : (
        <>
          <p className="chosen-name" title={image.source} data-testid="image-name">
            {image.name}
          </p>
          <ImageDetails image={image} />
          <CustomisationRow image={image} customise={customise} busy={busy} onCustomise={onCustomise} />
          <div className="actions">
            <button type="button" className="button" onClick={onChoose} disabled={busy}>
              Change…
            </button>
            <button type="button" className="button quiet" onClick={onClear} disabled={busy}>
              Remove
            </button>
          </div>
        </>
      )}
      <ErrorMessage error={error} />
    </StepCard>
  );
}
