/**
 * Where a password or a Wi-Fi passphrase stops being one: read from the user's file and at once
 * turned into what the card needs, a sha512-crypt hash or a WPA PSK. Nothing else in Sluice ever
 * holds either in clear, so nothing else can write, save or log it.
 */
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import { encrypt } from 'unixcrypt';
import { jobError } from '../../common/domain/failure.js';
import { errorText } from '../../common/domain/error-details.js';

/** A password or passphrase file holds one secret: a larger one is another file, named by mistake. */
const MAX_SECRET_FILE_BYTES = 4096;

/** crypt(3)'s salt alphabet. */
const SALT_ALPHABET = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * A password file's secret: its whole content less one final line ending, which editors and
 * `echo` add; quotes, spaces and inner line breaks are part of it.
 */
export async function readSecretFile(path: string, what: string): Promise<string> {
  let bytes: Buffer;
  try {
    const file = await open(path, 'r');
    try {
      const buffer = Buffer.alloc(MAX_SECRET_FILE_BYTES + 1);
      const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
      bytes = buffer.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  } catch (error) {
    throw jobError('invalid-request', `The ${what} file ${path} cannot be read: ${errorText(error)}.`);
  }
  if (bytes.length > MAX_SECRET_FILE_BYTES)
    throw jobError(
      'invalid-request',
      `The ${what} file ${path} is larger than ${MAX_SECRET_FILE_BYTES} bytes: it should hold only the ${what}.`,
    );
  const secret = bytes.toString('utf8').replace(/\r?\n$/, '');
  if (secret.length === 0) throw jobError('invalid-request', `The ${what} file ${path} is empty.`);
  return secret;
}

/** 16 random characters of crypt's alphabet: a fresh salt per hash, as crypt(3) and chpasswd make them. */
function randomSalt(): string {
  return [...randomBytes(16)].map((b) => SALT_ALPHABET[b % 64]).join('');
}

/** The sha512-crypt ($6$) hash of `password`, which /etc/shadow, chpasswd -e, userconf and cloud-init take. */
export function hashPassword(password: string, salt: string = randomSalt()): string {
  return encrypt(password, `$6$${salt}`);
}

/**
 * The WPA pre-shared key for a passphrase: PBKDF2-HMAC-SHA1 over the passphrase with the SSID as
 * salt, 4096 rounds, 32 bytes (IEEE 802.11i; what wpa_passphrase prints). wpa_supplicant and
 * NetworkManager take the 64 hex digits as the key itself. A passphrase of exactly 64 hex digits
 * already is one.
 */
export function wifiPsk(passphrase: string, ssid: string): string {
  if (/^[0-9a-fA-F]{64}$/.test(passphrase)) return passphrase.toLowerCase();
  const length = Buffer.byteLength(passphrase, 'utf8');
  if (length < 8 || length > 63)
    throw jobError('invalid-request', `A Wi-Fi password has 8 to 63 characters (this one has ${length} bytes).`);
  if (/[\u0000-\u001f\u007f]/.test(passphrase))
    throw jobError('invalid-request', 'A Wi-Fi password may not hold control characters such as a line break.');
  return pbkdf2Sync(Buffer.from(passphrase, 'utf8'), Buffer.from(ssid, 'utf8'), 4096, 32, 'sha1').toString('hex');
}
