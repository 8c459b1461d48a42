import { useEffect, useRef, useState, type ReactNode } from 'react';
import type { CustomisationPreview, SshKeyFile } from '../../../common/contracts/customise.js';
import type { SluiceApi } from '../../../common/contracts/ipc-contract.js';
import type { Profile } from '../../../common/domain/customisation.js';
import type { ImageInfo } from '../../../common/domain/image.js';
import { formatBytes } from '../../../common/domain/units.js';
import { draftOf, formOf, METHOD_LABEL, withProfile, type CustomiseForm, type SshMode } from '../customise-form.js';
import { ErrorMessage } from './ErrorMessage.js';
import { CancelOk, Modal } from './Modal.js';

interface CustomiseDialogProps {
  image: ImageInfo;
  /** How many cards are chosen (at least 1): the preview names each one's host. */
  cards: number;
  current: Profile | null;
  profiles: Profile[];
  api: Pick<SluiceApi, 'sealCustomisation' | 'previewCustomisation' | 'listSshKeys'>;
  /** Saves the profile list in the settings; resolves with an error sentence, or null when saved. */
  onSaveProfiles: (profiles: Profile[]) => Promise<string | null>;
  /** The customisation for the next flash (null: none). */
  onApply: (profile: Profile | null) => void;
  onCancel: () => void;
}

/** A labelled control; its hint stays outside the label, so the control's name is the label alone. */
function Field({ label, hint, children }: { label: string; hint?: string; children: ReactNode }) {
  return (
    <div className="field">
      <label className="field">
        <span className="field-label">{label}</span>
        {children}
      </label>
      {hint !== undefined && <span className="hint">{hint}</span>}
    </div>
  );
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

/**
 * The Customise step: the method found in the image and why, the settings with a
 * profile picker, and exactly which files each card gets. Typed passwords go to the main process
 * once and come back as hashes; only those are kept or saved.
 */
export function CustomiseDialog({
  image,
  cards,
  current,
  profiles,
  api,
  onSaveProfiles,
  onApply,
  onCancel,
}: CustomiseDialogProps) {
  const [form, setForm] = useState<CustomiseForm>(() => formOf(current));
  const [preview, setPreview] = useState<CustomisationPreview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [keyFiles, setKeyFiles] = useState<SshKeyFile[] | null>(null);
  const set = <K extends keyof CustomiseForm>(key: K, value: CustomiseForm[K]): void => {
    setForm((f) => ({ ...f, [key]: value }));
    setPreview(null);
    setNotice(null);
  };

  /** A download's boot partition is read when the settings are checked, not when it was chosen. */
  const method = image.customisation;
  const notLookedAt = method === null && image.customisationNote === null;
  if (method === null && !notLookedAt) {
    return (
      <Modal
        title="Customise"
        onClose={onCancel}
        className="customise"
        footer={
          <button type="button" className="button primary" onClick={onCancel} autoFocus>
            Close
          </button>
        }
      >
        <p className="message warning" data-testid="customise-method">
          This image cannot be customised. {image.customisationNote ?? ''}
        </p>
        <p>It can still be written as it is.</p>
      </Modal>
    );
  }

  /** The form sealed (secrets hashed in the main process), or null with the error shown. */
  const seal = async (): Promise<Profile | null> => {
    const made = draftOf(form);
    if ('problem' in made) {
      setError(made.problem);
      return null;
    }
    const sealed = await api.sealCustomisation(made.draft);
    if (!sealed.ok) {
      setError(sealed.error.message);
      return null;
    }
    setForm(formOf(sealed.value));
    setError(null);
    return sealed.value;
  };

  /** Sealed and planned for the chosen image: what applying it would write. */
  const check = async (): Promise<{ profile: Profile; preview: CustomisationPreview } | null> => {
    const profile = await seal();
    if (profile === null) return null;
    const planned = await api.previewCustomisation(profile, cards);
    if (!planned.ok) {
      setError(planned.error.message);
      return null;
    }
    setPreview(planned.value);
    return { profile, preview: planned.value };
  };

  const run = (action: () => Promise<void>) => () => {
    setBusy(true);
    void action().finally(() => setBusy(false));
  };

  const apply = run(async () => {
    const checked = await check();
    if (checked !== null) onApply(checked.profile);
  });
  const showPreview = run(async () => void (await check()));
  const save = run(async () => {
    const profile = await seal();
    if (profile === null) return;
    const problem = await onSaveProfiles(withProfile(profiles, profile));
    setError(problem);
    if (problem === null) setNotice(`Saved as "${profile.name}". Passwords are kept only as their hashes.`);
  });
  const remove = run(async () => {
    const problem = await onSaveProfiles(profiles.filter((p) => p.name !== form.name));
    setError(problem);
    if (problem === null) setNotice(`Deleted "${form.name}".`);
  });
  const importKeys = run(async () => {
    const found = await api.listSshKeys();
    if (found.ok) setKeyFiles(found.value);
    else setError(found.error.message);
  });
  const addKey = (key: string) =>
    set('keys', [...form.keys.split('\n').filter((l) => l.trim() !== ''), key].join('\n'));
  const hasKey = (key: string) => form.keys.split('\n').some((l) => l.trim() === key);
  const saved = profiles.some((p) => p.name === form.name);

  return (
    <Modal
      title="Customise"
      onClose={onCancel}
      className="customise"
      footer={
        <CancelOk onCancel={onCancel} ok="Use these settings" onOk={apply} disabled={busy}>
          {current !== null && (
            <button type="button" className="button" onClick={() => onApply(null)} disabled={busy}>
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
      <div className="profile-row">
        <Field label="Profile">
          <select
            value={saved ? form.name : ''}
            onChange={(event) => {
              const chosen = profiles.find((p) => p.name === event.target.value);
              setForm(formOf(chosen ?? null));
              setPreview(null);
              setNotice(null);
            }}
          >
            <option value="">{profiles.length === 0 ? 'No saved profiles' : 'New settings'}</option>
            {profiles.map((p) => (
              <option key={p.name} value={p.name}>
                {p.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Profile name">
          <input
            value={form.name}
            onChange={(e) => set('name', e.target.value)}
            placeholder="Classroom"
            maxLength={64}
          />
        </Field>
        <div className="actions">
          <button type="button" className="button" onClick={save} disabled={busy || form.name.trim() === ''}>
            Save profile
          </button>
          {saved && (
            <button type="button" className="button quiet" onClick={remove} disabled={busy}>
              Delete profile
            </button>
          )}
        </div>
      </div>
      <fieldset>
        <legend>Host and user</legend>
        <Field label="Host name" hint="{n} counts up with each card: pi-{n} names them pi-1, pi-2, …">
          <input
            value={form.hostname}
            onChange={(e) => set('hostname', e.target.value)}
            placeholder="raspberrypi"
            spellCheck={false}
          />
        </Field>
        <Field label="User name">
          <input
            value={form.userName}
            onChange={(e) => set('userName', e.target.value)}
            placeholder="pi"
            autoComplete="off"
            spellCheck={false}
          />
        </Field>
        <Field
          label="Password"
          hint={
            form.passwordHash === null
              ? 'Only its hash is kept and written.'
              : 'Kept as a hash; type a new one to change it.'
          }
        >
          <input
            type="password"
            value={form.password}
            onChange={(e) => set('password', e.target.value)}
            autoComplete="new-password"
            placeholder={form.passwordHash === null ? '' : '••••••••'}
          />
        </Field>
      </fieldset>
      <fieldset>
        <legend>SSH</legend>
        <div role="radiogroup" aria-label="SSH" className="choices">
          {(
            [
              ['off', 'Leave as the image has it'],
              ['keys', 'On, public keys only'],
              ['password', 'On, also with the password'],
            ] as [SshMode, string][]
          ).map(([mode, label]) => (
            <label key={mode} className="toggle">
              <input type="radio" name="ssh" checked={form.ssh === mode} onChange={() => set('ssh', mode)} />
              {label}
            </label>
          ))}
        </div>
        {form.ssh !== 'off' && (
          <>
            <Field label="Authorized keys" hint="One OpenSSH public key per line.">
              <textarea rows={3} value={form.keys} onChange={(e) => set('keys', e.target.value)} spellCheck={false} />
            </Field>
            <button type="button" className="button quiet" onClick={importKeys} disabled={busy}>
              Import from ~/.ssh…
            </button>
            {keyFiles !== null && (
              <ul className="key-files" aria-label="Keys in ~/.ssh">
                {keyFiles.length === 0 && <li className="hint">No id_*.pub files in ~/.ssh.</li>}
                {keyFiles.map((file) => (
                  <li key={file.name}>
                    <strong>{file.name}</strong>
                    {file.problem !== null && <span className="hint"> {file.problem}</span>}
                    {file.keys.map((key) => (
                      <button
                        key={key}
                        type="button"
                        className="button quiet"
                        onClick={() => addKey(key)}
                        disabled={hasKey(key)}
                        aria-label={`Add ${file.name}`}
                      >
                        {hasKey(key) ? 'Added' : 'Add'}
                      </button>
                    ))}
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </fieldset>
      <fieldset>
        <legend>Wi-Fi</legend>
        <Field label="Network name (SSID)">
          <input value={form.ssid} onChange={(e) => set('ssid', e.target.value)} spellCheck={false} />
        </Field>
        <Field
          label="Wi-Fi password"
          hint={
            form.psk === null
              ? 'Kept and written only as its WPA key.'
              : 'Kept as its WPA key; type it again to change it or the network.'
          }
        >
          <input
            type="password"
            value={form.wifiPassword}
            onChange={(e) => set('wifiPassword', e.target.value)}
            autoComplete="new-password"
            placeholder={form.psk === null ? '' : '••••••••'}
          />
        </Field>
        <label className="toggle">
          <input type="checkbox" checked={form.hidden} onChange={(e) => set('hidden', e.target.checked)} />
          Hidden network
        </label>
        <Field label="Wi-Fi country" hint="Two letters, such as GB, DE or US.">
          <input
            value={form.country}
            onChange={(e) => set('country', e.target.value)}
            maxLength={2}
            spellCheck={false}
          />
        </Field>
      </fieldset>
      <fieldset>
        <legend>Locale</legend>
        <Field label="Time zone">
          <input
            value={form.timezone}
            onChange={(e) => set('timezone', e.target.value)}
            placeholder="Europe/London"
            spellCheck={false}
          />
        </Field>
        <Field label="Keyboard layout">
          <input
            value={form.keymap}
            onChange={(e) => set('keymap', e.target.value)}
            placeholder="gb"
            spellCheck={false}
          />
        </Field>
      </fieldset>
      <details>
        <summary>Your own first-boot files</summary>
        {(method === null || method === 'systemd-firstrun') && (
          <Field label="firstrun.sh" hint="Written in place of the one Sluice makes.">
            <textarea
              rows={4}
              value={form.firstRunScript}
              onChange={(e) => set('firstRunScript', e.target.value)}
              spellCheck={false}
            />
          </Field>
        )}
        {(method === null || method === 'cloud-init') && (
          <>
            <Field label="user-data" hint="Written in place of the one Sluice makes.">
              <textarea
                rows={4}
                value={form.userData}
                onChange={(e) => set('userData', e.target.value)}
                spellCheck={false}
              />
            </Field>
            <Field label="network-config">
              <textarea
                rows={4}
                value={form.networkConfig}
                onChange={(e) => set('networkConfig', e.target.value)}
                spellCheck={false}
              />
            </Field>
          </>
        )}
        {method === 'rpi-preseed' && (
          <p className="hint">This image takes rpi-preseed.toml, made from the settings above.</p>
        )}
      </details>
      <div className="actions">
        <button type="button" className="button" onClick={showPreview} disabled={busy}>
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
