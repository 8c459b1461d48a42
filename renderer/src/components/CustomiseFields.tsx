import type { ReactNode } from 'react';
import type { SshKeyFile } from '../../../common/contracts/customise.js';
import type { CustomisationMethod, Profile } from '../../../common/domain/customisation.js';
import type { CustomiseForm, SshMode } from '../customise-form.js';
import type { SetField } from '../use-customise.js';

/** The form and the way to change one of its fields: what every group of fields takes. */
interface FormProps {
  form: CustomiseForm;
  set: SetField;
}

/** A labelled control; its hint stays outside the label, so the control's name is the label alone. */
export function Field({ label, hint, children }: { label: string; hint?: string; children: ReactNode }) {
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

interface ProfileRowProps extends FormProps {
  profiles: Profile[];
  busy: boolean;
  onChoose: (name: string) => void;
  onSave: () => void;
  onDelete: () => void;
}

/** The saved profiles to start from, and saving or deleting the one being edited. */
export function ProfileRow({ form, set, profiles, busy, onChoose, onSave, onDelete }: ProfileRowProps) {
  const saved = profiles.some((p) => p.name === form.name);
  return (
    <div className="profile-row">
      <Field label="Profile">
        <select value={saved ? form.name : ''} onChange={(event) => onChoose(event.target.value)}>
          <option value="">{profiles.length === 0 ? 'No saved profiles' : 'New settings'}</option>
          {profiles.map((p) => (
            <option key={p.name} value={p.name}>
              {p.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Profile name">
        <input value={form.name} onChange={(e) => set('name', e.target.value)} placeholder="Classroom" maxLength={64} />
      </Field>
      <div className="actions">
        <button type="button" className="button" onClick={onSave} disabled={busy || form.name.trim() === ''}>
          Save profile
        </button>
        {saved && (
          <button type="button" className="button quiet" onClick={onDelete} disabled={busy}>
            Delete profile
          </button>
        )}
      </div>
    </div>
  );
}

export function HostUserFields({ form, set }: FormProps) {
  return (
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
  );
}

const SSH_MODES: [SshMode, string][] = [
  ['off', 'Leave as the image has it'],
  ['keys', 'On, public keys only'],
  ['password', 'On, also with the password'],
];

interface SshFieldsProps extends FormProps {
  busy: boolean;
  /** The public keys found in ~/.ssh, once asked for. */
  keyFiles: SshKeyFile[] | null;
  onImportKeys: () => void;
}

export function SshFields({ form, set, busy, keyFiles, onImportKeys }: SshFieldsProps) {
  return (
    <fieldset>
      <legend>SSH</legend>
      <div role="radiogroup" aria-label="SSH" className="choices">
        {SSH_MODES.map(([mode, label]) => (
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
          <button type="button" className="button quiet" onClick={onImportKeys} disabled={busy}>
            Import from ~/.ssh…
          </button>
          {keyFiles !== null && <KeyFileList form={form} set={set} keyFiles={keyFiles} />}
        </>
      )}
    </fieldset>
  );
}

/** Each id_*.pub file in ~/.ssh, with a button that adds its key to the authorized keys. */
function KeyFileList({ form, set, keyFiles }: FormProps & { keyFiles: SshKeyFile[] }) {
  const lines = form.keys.split('\n');
  const hasKey = (key: string) => lines.some((l) => l.trim() === key);
  const addKey = (key: string) => set('keys', [...lines.filter((l) => l.trim() !== ''), key].join('\n'));
  return (
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
  );
}

export function WifiFields({ form, set }: FormProps) {
  return (
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
        <input value={form.country} onChange={(e) => set('country', e.target.value)} maxLength={2} spellCheck={false} />
      </Field>
    </fieldset>
  );
}

export function LocaleFields({ form, set }: FormProps) {
  return (
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
  );
}

/** For an image saved shrunk (sluice backup --shrink): its root filled out to the card again. */
export function GrowRootField({ form, set }: FormProps) {
  return (
    <fieldset>
      <legend>Card</legend>
      <label className="toggle">
        <input type="checkbox" checked={form.growRoot} onChange={(e) => set('growRoot', e.target.checked)} />
        Grow the root to the card on the first boot
      </label>
    </fieldset>
  );
}

/** A multi-line field of the form, for a file the user writes whole. */
function FileField({
  form,
  set,
  field,
  label,
  hint,
}: FormProps & { field: 'firstRunScript' | 'userData' | 'networkConfig'; label: string; hint?: string }) {
  return (
    <Field label={label} {...(hint === undefined ? {} : { hint })}>
      <textarea rows={4} value={form[field]} onChange={(e) => set(field, e.target.value)} spellCheck={false} />
    </Field>
  );
}

/** The first-boot files the image's method reads, written as the user typed them; all of them while the method is unknown. */
export function FirstBootFiles({ form, set, method }: FormProps & { method: CustomisationMethod | null }) {
  const own = 'Written in place of the one Sluice makes.';
  return (
    <details>
      <summary>Your own first-boot files</summary>
      {(method === null || method === 'systemd-firstrun') && (
        <FileField form={form} set={set} field="firstRunScript" label="firstrun.sh" hint={own} />
      )}
      {(method === null || method === 'cloud-init') && (
        <>
          <FileField form={form} set={set} field="userData" label="user-data" hint={own} />
          <FileField form={form} set={set} field="networkConfig" label="network-config" />
        </>
      )}
      {method === 'rpi-preseed' && (
        <p className="hint">This image takes rpi-preseed.toml, made from the settings above.</p>
      )}
    </details>
  );
}
