/**
 * Where Sluice keeps what it downloads for later (images, catalogue documents, icons): the
 * system's own place for a user's caches, which backup tools skip and the user may empty.
 *   Linux:   $XDG_CACHE_HOME/sluice, else ~/.cache/sluice
 *   macOS:   ~/Library/Caches/Sluice
 *   Windows: %LOCALAPPDATA%\Sluice\Cache
 * SLUICE_CACHE_DIR replaces it. Under sudo it is the invoking user's, found from their account
 * rather than HOME (sudo may set HOME to root's): the images are still downloaded and read as that
 * user (user/images/processes/image-child.ts), so their cache is the one they can write.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { invokingUser } from '../images/processes/image-child.js';

/** The home folder of the account `uid` in /etc/passwd; null when it is not there (macOS keeps accounts elsewhere). */
function passwdHome(uid: number): string | null {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const fields = line.split(':');
      if (fields.length >= 7 && fields[2] === String(uid)) return fields[5] ?? null;
    }
  } catch {
    // No such file: the fallback below applies.
  }
  return null;
}

export function cacheDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const override = env['SLUICE_CACHE_DIR'];
  if (override !== undefined && override !== '') return override;
  const user = invokingUser(env);
  const home = (user === null ? null : passwdHome(user.uid)) ?? homedir();
  switch (platform) {
    case 'darwin':
      return join(home, 'Library', 'Caches', 'Sluice');
    case 'win32':
      return join(env['LOCALAPPDATA'] ?? join(home, 'AppData', 'Local'), 'Sluice', 'Cache');
    default:
      return join(user === null && env['XDG_CACHE_HOME'] ? env['XDG_CACHE_HOME'] : join(home, '.cache'), 'sluice');
  }
}

/** Where catalogue documents are saved for offline use, inside the cache folder `cache`. */
export function savedCataloguesDir(cache: string): string {
  return join(cache, 'catalogues');
}

/** Where catalogue icons are kept (user/catalogue/icons.ts), inside the cache folder `cache`. */
export function catalogueIconsDir(cache: string): string {
  return join(cache, 'icons');
}
