/**
 * SSH public keys for a card's authorized_keys: read from the user's .pub files (--ssh-key, the
 * app's import of ~/.ssh/id_*.pub) and refused unless each line is a public key, so that a private
 * key named by mistake never reaches a card.
 */
import { readFile } from 'node:fs/promises';
import { PUBLIC_KEY_LINE } from '../../common/domain/customisation.js';
import { errorText } from '../../common/domain/error-details.js';
import { jobError } from '../../common/domain/failure.js';

/** A .pub file is a line or two; an authorized_keys file a few dozen. */
const MAX_KEY_FILE_BYTES = 256 * 1024;

/**
 * Why `line` is not a public key, or null when it is: its shape (type, base64, comment) and the
 * type the key blob itself starts with, which must be the one the line names.
 */
export function publicKeyProblem(line: string): string | null {
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----|^PuTTY-User-Key-File-/.test(line))
    return 'it is a private key; give the public key (the .pub file next to it)';
  const match = PUBLIC_KEY_LINE.exec(line);
  if (match === null)
    return 'it is not an OpenSSH public key line (type, key, comment), such as the one in ~/.ssh/id_ed25519.pub';
  const [, type = '', base64 = ''] = match;
  const blob = Buffer.from(base64, 'base64');
  if (blob.toString('base64') !== base64) return 'its key is not valid base64';
  const nameLength = blob.length >= 4 ? blob.readUInt32BE(0) : -1;
  if (nameLength < 1 || 4 + nameLength > blob.length || blob.toString('latin1', 4, 4 + nameLength) !== type)
    return `its key data is not a ${type} key`;
  return null;
}

/** The public keys in `text` (a .pub or authorized_keys file): every line but blank ones and # comments must be one. */
export function parsePublicKeys(text: string, from: string): string[] {
  const keys: string[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.replace(/\r$/, '').trim();
    if (line === '' || line.startsWith('#')) continue;
    const problem = publicKeyProblem(line);
    if (problem !== null)
      throw jobError(
        'invalid-request',
        `${from} line ${i + 1} is not an SSH public key: ${problem}. Nothing was written.`,
      );
    keys.push(line);
  }
  if (keys.length === 0) throw jobError('invalid-request', `${from} holds no SSH public key. Nothing was written.`);
  return keys;
}

/** The public keys of a key file. */
export async function readPublicKeyFile(path: string): Promise<string[]> {
  let text: string;
  try {
    const bytes = await readFile(path);
    if (bytes.length > MAX_KEY_FILE_BYTES)
      throw new Error(`it is larger than ${MAX_KEY_FILE_BYTES / 1024} KiB, too large for a key file`);
    text = bytes.toString('utf8');
  } catch (error) {
    throw jobError('invalid-request', `The SSH key file ${path} cannot be read: ${errorText(error)}.`);
  }
  return parsePublicKeys(text, path);
}
