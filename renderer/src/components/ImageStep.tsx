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
  onClear: () => void;
}

/** What the drive receives: exact, "about" for a size the format only hints at, or unknown. */
function writesText(image: ImageInfo): string {
  if (image.uncompressedSize === null) return 'Known once decompressed';
  return image.sizeExact ? formatBytes(image.uncompressedSize) : `about ${formatBytes(image.uncompressedSize)}`;
}

function partitionsText(image: ImageInfo): string {
  if (image.partitionTable === null) return 'Could not be read';
  const names = image.partitions.map((p) => `${p.label ?? p.type} (${formatBytes(p.size)})`);
  return names.length === 0 ? PARTITION_TABLE_LABEL[image.partitionTable] : `${PARTITION_TABLE_LABEL[image.partitionTable]}: ${names.join(', ')}`;
}

function ImageDetails({ image }: { image: ImageInfo }) {
  return (
    <dl className="facts" aria-label="Image details">
      <dt>Size</dt>
      <dd>{formatBytes(image.fileSize)}</dd>
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

/** Step 1: the image, chosen with the native dialog or dropped anywhere on the window. */
export function ImageStep({ image, busy, error, onChoose, onClear }: ImageStepProps) {
  return (
    <StepCard number={1} title="Image" icon={<ImageIcon className="step-icon" />} done={image !== null}>
      {image === null ? (
        <>
          <button type="button" className="button primary" onClick={onChoose} disabled={busy}>
            {busy ? 'Opening…' : 'Choose image…'}
          </button>
          <p className="hint">or drop an image file anywhere in this window</p>
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
