import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as v from 'valibot';
import { errorCode, errorText } from '../../common/domain/error-details.js';
import {
  DEFAULT_SETTINGS,
  SettingsSchema,
  type Settings,
  type SettingsPatch,
} from '../../common/contracts/settings.js';

/**
 * The settings file (settings.json in Electron's userData folder). Each field that is missing or
 * invalid falls back to its default on its own, so one bad value does not reset the others; a file
 * that is not JSON at all is kept aside as settings.json.invalid rather than overwritten.
 */
export class SettingsStore {
  private constructor(
    private readonly file: string,
    private current: Settings,
    /** What was wrong with the file when it was read, for the log; null when nothing was. */
    readonly problem: string | null,
  ) {}

  static async open(file: string): Promise<SettingsStore> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return new SettingsStore(file, { ...DEFAULT_SETTINGS }, null);
      return new SettingsStore(
        file,
        { ...DEFAULT_SETTINGS },
        `${file} cannot be read (${errorText(error)}); using the defaults.`,
      );
    }
    let stored: unknown;
    try {
      stored = JSON.parse(text);
    } catch (error) {
      await rename(file, `${file}.invalid`);
      return new SettingsStore(
        file,
        { ...DEFAULT_SETTINGS },
        `${file} is not JSON (${errorText(error)}); kept it as ${file}.invalid and started from the defaults.`,
      );
    }
    const { settings, rejected } = mergeWithDefaults(stored);
    const problem =
      rejected.length === 0
        ? null
        : `${file}: ignored invalid ${rejected.join(', ')}; using the defaults for ${rejected.length === 1 ? 'it' : 'them'}.`;
    return new SettingsStore(file, settings, problem);
  }

  get(): Settings {
    return { ...this.current };
  }

  /** Applies `patch` (already schema-checked), saves, and returns the complete settings. */
  async update(patch: SettingsPatch): Promise<Settings> {
    const next = v.parse(SettingsSchema, { ...this.current, ...patch });
    await mkdir(dirname(this.file), { recursive: true });
    // Write-then-rename: a crash mid-write leaves the old file, never half a file.
    const temporary = `${this.file}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, this.file);
    this.current = next;
    return this.get();
  }
}

function mergeWithDefaults(stored: unknown): { settings: Settings; rejected: string[] } {
  const settings: Settings = { ...DEFAULT_SETTINGS };
  const rejected: string[] = [];
  const record =
    typeof stored === 'object' && stored !== null && !Array.isArray(stored)
      ? (stored as Record<string, unknown>)
      : null;
  if (record === null) return { settings, rejected: ['the whole file (not an object)'] };
  for (const key of Object.keys(SettingsSchema.entries) as (keyof Settings)[]) {
    if (!(key in record)) continue;
    const parsed = v.safeParse(SettingsSchema.entries[key], record[key]);
    if (parsed.success) Object.assign(settings, { [key]: parsed.output });
    else rejected.push(`"${key}"`);
  }
  return { settings, rejected };
}
