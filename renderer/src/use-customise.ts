import { useState } from 'react';
import type { CustomisationPreview, SshKeyFile } from '../../common/contracts/customise.js';
import type { SluiceApi } from '../../common/contracts/ipc-contract.js';
import type { Profile } from '../../common/domain/customisation.js';
import { draftOf, formOf, withProfile, type CustomiseForm } from './customise-form.js';

/** Sets one field of the form; what was previewed or said about the old value goes. */
export type SetField = <K extends keyof CustomiseForm>(key: K, value: CustomiseForm[K]) => void;

export interface CustomiseOptions {
  current: Profile | null;
  profiles: Profile[];
  /** How many cards are chosen (at least 1): the preview names each one's host. */
  cards: number;
  api: Pick<SluiceApi, 'sealCustomisation' | 'previewCustomisation' | 'listSshKeys'>;
  /** Saves the profile list in the settings; resolves with an error sentence, or null when saved. */
  onSaveProfiles: (profiles: Profile[]) => Promise<string | null>;
  /** The customisation for the next flash (null: none). */
  onApply: (profile: Profile | null) => void;
}

/**
 * The Customise dialog's state and what its buttons do. Typed passwords go to the main process once
 * (seal) and come back as hashes; only those are kept or saved.
 */
export function useCustomise({ current, profiles, cards, api, onSaveProfiles, onApply }: CustomiseOptions) {
  const [form, setForm] = useState<CustomiseForm>(() => formOf(current));
  const [preview, setPreview] = useState<CustomisationPreview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [keyFiles, setKeyFiles] = useState<SshKeyFile[] | null>(null);

  /** What was previewed or said about the form before it changed goes. */
  const forgetOutcome = () => {
    setPreview(null);
    setNotice(null);
  };
  const set: SetField = (key, value) => {
    setForm((f) => ({ ...f, [key]: value }));
    forgetOutcome();
  };
  const chooseProfile = (name: string) => {
    setForm(formOf(profiles.find((p) => p.name === name) ?? null));
    forgetOutcome();
  };

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

  /** Sealed and planned for the chosen image: the profile, with what applying it would write shown. */
  const check = async (): Promise<Profile | null> => {
    const profile = await seal();
    if (profile === null) return null;
    const planned = await api.previewCustomisation(profile, cards);
    if (!planned.ok) {
      setError(planned.error.message);
      return null;
    }
    setPreview(planned.value);
    return profile;
  };

  /** `action` with the buttons disabled while it runs. */
  const run = (action: () => Promise<void>) => () => {
    setBusy(true);
    void action().finally(() => setBusy(false));
  };

  /** The profile list saved as `next`, and `done` said when that worked. */
  const saveProfiles = async (next: Profile[], done: string) => {
    const problem = await onSaveProfiles(next);
    setError(problem);
    if (problem === null) setNotice(done);
  };

  const actions = {
    apply: run(async () => {
      const profile = await check();
      if (profile !== null) onApply(profile);
    }),
    showPreview: run(async () => void (await check())),
    save: run(async () => {
      const profile = await seal();
      if (profile === null) return;
      await saveProfiles(
        withProfile(profiles, profile),
        `Saved as "${profile.name}". Passwords are kept only as their hashes.`,
      );
    }),
    remove: run(() =>
      saveProfiles(
        profiles.filter((p) => p.name !== form.name),
        `Deleted "${form.name}".`,
      ),
    ),
    importKeys: run(async () => {
      const found = await api.listSshKeys();
      if (found.ok) setKeyFiles(found.value);
      else setError(found.error.message);
    }),
  };

  return { form, set, chooseProfile, preview, error, notice, busy, keyFiles, actions };
}
