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

function ImageDetails({ image }: { image: ImageInfo }) {
  return (
    <dl className="facts" aria-label="Image details">
      <dt>Size</dt>
      <dd>{formatBytes(image.fileSize)}</dd>
      <dt>Writes</dt>
      <dd>{image.uncompressedSize === null ? 'Unknown until decompressed' : formatBytes(image.uncompressedSize)}</dd>
      <dt>Format</dt>
      <dd data-testid="image-format">{FORMAT_LABEL[image.format]}</dd>
      <dt>Partitions</dt>
      <dd>{image.partitionTable === null ? 'Unknown until decompressed' : PARTITION_TABLE_LABEL[image.partitionTable]}</dd>
    </dl>
  );
}

/** Step 1: the image, chosen with the native dialog or dropped anywhere on the window. */
export function ImageStep({ image, busy, error, onChoose, onClear }: ImageStepProps) {
  return (
    <StepCard number={1} title="Image" icon={<ImageIcon className="step-icon" />} done={image?.supported === true}>
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
          {!image.supported && (
            <p className="message error" role="alert">
              This is a {FORMAT_LABEL[image.format].toLowerCase()}: unsupported in this version. Decompress it first, or choose a raw .img or .iso.
            </p>
          )}
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
