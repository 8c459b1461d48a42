import { useEffect, useRef } from 'react';
import type { CustomisationPreview } from '../../../common/contracts/customise.js';
import type { ImageInfo } from '../../../common/domain/image.js';
import { formatBytes } from '../../../common/domain/units.js';
import { METHOD_LABEL } from '../customise-form.js';
import { useCustomise, type CustomiseOptions } from '../use-customise.js';
import {
  FirstBootFiles,
  HostUserFields,
  GrowRootField,
  LocaleFields,
  ProfileRow,
  SshFields,
  WifiFields,
} from './CustomiseFields.js';
import { ErrorMessage } from './ErrorMessage.js';
import { CancelOk, Modal } from './Modal.js';

interface CustomiseDialogProps extends CustomiseOptions {
  image: ImageInfo;
  onCancel: () => void;
}

/** What will be written: the method, and each card's files and host name. */
function PreviewList({ preview }: { preview: CustomisationPreview }) {
  const files = preview.files[0] ?? [];
  const ref = useRef<HTMLElement>(null);
  // It appears at the foot of a long form: brought into view, and read out, when it changes.
  // A block body: newer Chromium returns a promise from scrollIntoView, which React would take for a cleanup.
  useEffect(() => {
    ref.current?.scrollIntoView({ block: 'nearest' });
  }, [preview]);
  return (
    <section className="preview" aria-label="Files written" aria-live="polite" ref={ref}>
      <p data-testid="preview-method">
        {METHOD_LABEL[preview.method]}: {preview.why}
      </p>
      <p>
        <strong>Writes onto the boot partition{preview.files.length > 1 ? ' of each card' : ''}:</strong>{' '}
        {files.map((f) => `${f.name} (${formatBytes(f.size)})`).join(', ')}
      </p>
      {preview.hostnames.some((h) => h !== null) && (
        <p data-testid="preview-hostnames">
          Host names: {preview.hostnames.map((h, i) => `card ${i + 1}: ${h ?? 'as the image has it'}`).join(', ')}
        </p>
      )}
      <p className="hint">No password or Wi-Fi password is written in clear: only its hash and WPA key.</p>
    </section>
  );
}

/** An image whose boot partition was read and holds no first-boot method Sluice knows. */
function NotCustomisable({ note, onClose }: { note: string | null; onClose: () => void }) {
  return (
    <Modal
      title="Customise"
      onClose={onClose}
      className="customise"
      footer={
        <button type="button" className="button primary" onClick={onClose} autoFocus>
          Close
        </button>
      }
    >
      <p className="message warning" data-testid="customise-method">
        This image cannot be customised. {note ?? ''}
      </p>
      <p>It can still be written as it is.</p>
    </Modal>
  );
}

/**
 * The Customise step: the method found in the image and why, the settings with a
 * profile picker, and exactly which files each card gets. Typed passwords go to the main process
 * once and come back as hashes; only those are kept or saved.
 */
export function CustomiseDialog({ image, onCancel, ...options }: CustomiseDialogProps) {
  const { form, set, chooseProfile, preview, error, notice, busy, keyFiles, actions } = useCustomise(options);
  /** A download's boot partition is read when the settings are checked, not when it was chosen. */
  const method = image.customisation;
  const notLookedAt = method === null && image.customisationNote === null;
  if (method === null && !notLookedAt) return <NotCustomisable note={image.customisationNote} onClose={onCancel} />;

  return (
    <Modal
      title="Customise"
      onClose={onCancel}
      className="customise"
      footer={
        <CancelOk onCancel={onCancel} ok="Use these settings" onOk={actions.apply} disabled={busy}>
          {options.current !== null && (
            <button type="button" className="button" onClick={() => options.onApply(null)} disabled={busy}>
              Don't customise
            </button>
          )}
        </CancelOk>
      }
    >
      <p data-testid="customise-method">
        {method === null ? (
          'Sluice reads the boot partition of this download to find its first-boot method when you check the settings (Show what is written).'
        ) : (
          <>
            <strong>{METHOD_LABEL[method]}</strong>: {image.customisationNote}
          </>
        )}
      </p>
      <ProfileRow
        form={form}
        set={set}
        profiles={options.profiles}
        busy={busy}
        onChoose={chooseProfile}
        onSave={actions.save}
        onDelete={actions.remove}
      />
      <HostUserFields form={form} set={set} />
      <SshFields form={form} set={set} busy={busy} keyFiles={keyFiles} onImportKeys={actions.importKeys} />
      <WifiFields form={form} set={set} />
      <LocaleFields form={form} set={set} />
      <GrowRootField form={form} set={set} />
      <FirstBootFiles form={form} set={set} method={method} />
      <div className="actions">
        <button type="button" className="button" onClick={actions.showPreview} disabled={busy}>
          Show what is written
        </button>
      </div>
      {preview !== null && <PreviewList preview={preview} />}
      {notice !== null && (
        <p className="message notice" role="status">
          {notice}
        </p>
      )}
      <ErrorMessage error={error} />
    </Modal>
  );
}
