/**
 * The only pages the app opens in the user's browser. Anything else a renderer asks for is refused:
 * a compromised page must not be able to launch arbitrary URLs or protocol handlers.
 */
export const EXTERNAL_LINKS = {
  /** F3 (Fight Flash Fraud) tests a card's real capacity; offered when verification fails. */
  fakeCardTest: 'https://github.com/AltraMayor/f3',
} as const;

const ALLOWED: ReadonlySet<string> = new Set(Object.values(EXTERNAL_LINKS));

/** Exactly one of our own https links; no prefixes, no redirects through query strings. */
export function isAllowedExternalUrl(url: string): boolean {
  return url.startsWith('https://') && ALLOWED.has(url);
}
