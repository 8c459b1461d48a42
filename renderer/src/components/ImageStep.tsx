import { useState, type FormEvent } from 'react';
import type { ImageInfo } from '../../../electron/common/models.js';
import { formatBytes } from '../../../worker/common/units.js';
import { FORMAT_LABEL, PARTITION_TABLE_LABEL } from '../labels.js';
import { ImageIcon } from './Icons.js';
import { StepCard } from './StepCard.js';

interface ImageStepProps {
  image: ImageInfo | null;
  busy: boolean;
  error: string | null;
  onChoose: () => void;
  onOpenUrl: (url: string) => void;
  onClear: () => void;
}

/** What the drive receives: exact, "about" for a size the format only hints at, or unknown. */
function writesText(image: ImageInfo): string {
  if (image.uncompressedSize === null) return 'Known once decompressed';
  return image.sizeExact ? formatBytes(image.uncompressedSize) : `about ${formatBytes(image.uncompressedSize)}`;
}

function partitionsText(image: ImageInfo): string {
  if (image.partitionTable === null) return image.origin === 'url' && image.format !== 'raw' ? 'Read once downloaded' : 'Could not be read';
  const names = image.partitions.map((p) => `${p.label ?? p.type} (${formatBytes(p.size)})`);
  return names.length === 0 ? PARTITION_TABLE_LABEL[image.partitionTable] : `${PARTITION_TABLE_LABEL[image.partitionTable]}: ${names.join(', ')}`;
}

function ImageDetails({ image }: { image: ImageInfo }) {
  return (
    <dl className="facts" aria-label="Image details">
      <dt>{image.origin === 'url' ? 'Download' : 'Size'}</dt>
      <dd>{image.fileSize === null ? 'Not given by the server' : formatBytes(image.fileSize)}</dd>
      <dt>Writes</dt>
      <dd data-testid="image-writes">{writesText(image)}</dd>
      <dt>Format</dt>
      <dd data-testid="image-format">
        {FORMAT_LABEL[image.format]}
        {image.entry !== null && `: ${image.entry.name}${image.entry.choice === null ? '' : ` (${image.entry.choice})`}`}
      </dd>
      <dt>Partitions</dt>
      <dd data-testid="image-partitions">{partitionsText(image)}</dd>
      {image.blockMap !== null && (
        <>
          <dt>Block map</dt>
          <dd data-testid="image-block-map">
            {formatBytes(image.blockMap.mappedBytes)} mapped, only that is written and verified ({image.blockMap.from})
          </dd>
        </>
      )}
      {image.checksumFrom !== null && (
        <>
          <dt>Checksum</dt>
          <dd data-testid="image-checksum">SHA-256 checked while writing ({image.checksumFrom})</dd>
        </>
      )}
    </dl>
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
      <input type="url" aria-label="Image address" placeholder="https://…/image.img.xz" value={url} onChange={(event) => setUrl(event.target.value)} disabled={busy} required />
      <button type="submit" className="button" disabled={busy || url.trim() === ''}>
        Open
      </button>
    </form>
  );
}

/** Step 1: the image, chosen with the native dialog, dropped anywhere on the window, or given as a web address. */
export function ImageStep({ image, busy, error, onChoose, onOpenUrl, onClear }: ImageStepProps) {
  const [askingUrl, setAskingUrl] = useState(false);
  return (
    <StepCard number={1} title="Image" icon={<ImageIcon className="step-icon" />} done={image !== null}>
      {image === null ? (
        <>
          <button type="button" className="button primary" onClick={onChoose} disabled={busy}>
            {busy ? 'Opening…' : 'Choose image…'}
          </button>
          <p className="hint">or drop an image file anywhere in this window</p>
          {askingUrl ? (
            <UrlForm busy={busy} onOpenUrl={onOpenUrl} />
          ) : (
            <button type="button" className="button quiet" onClick={() => setAskingUrl(true)} disabled={busy}>
              Flash from URL…
            </button>
          )}
        </>
      ) : (
        <>
          <p className="chosen-name" title={image.path} data-testid="image-name">
            {image.name}
          </p>
          <ImageDetails image={image} />
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
      {error !== null && (
        <p className="message error" role="alert">
          {error}
        </p>
      )}
    </StepCard>
  );
}
