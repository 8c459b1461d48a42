/**
 * Catalogue documents as they were last read from their servers, so that the list still shows
 * with the network off (marked as such). Saved as the bytes that came, and parsed again like a
 * fresh download when used: a saved copy is no more trusted than the server was.
 */
import { createHash } from 'node:crypto';
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readSidecar } from '../images/files/sidecar-file.js';
import { MAX_DOCUMENT_BYTES } from './os-list.js';

function fileFor(dir: string, source: string): string {
  return join(dir, `${createHash('sha256').update(source).digest('hex')}.json`);
}

/** Saves what `source` answered; a failure to save costs only the offline copy. */
export async function saveDocument(dir: string, source: string, bytes: Buffer): Promise<void> {
  const file = fileFor(dir, source);
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await mkdir(dir, { recursive: true });
    // Write-then-rename: a crash mid-write leaves the old copy, never half a document.
    await writeFile(temporary, bytes);
    await rename(temporary, file);
  } catch {
    // The list is shown from what was downloaded; only the offline copy is missing.
  }
}

/** The copy of `source` saved when it last could be read, and when that was; null when there is none. */
export async function savedDocument(dir: string, source: string): Promise<{ bytes: Buffer; savedAt: number } | null> {
  const file = fileFor(dir, source);
  const bytes = await readSidecar(file, MAX_DOCUMENT_BYTES, `The saved copy of the catalogue ${source}`).catch(
    () => null,
  );
  if (bytes === null) return null;
  const { mtimeMs } = await stat(file);
  return { bytes, savedAt: mtimeMs };
}
