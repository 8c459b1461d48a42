/** `20G`, `500M`, `1.5T` (decimal, as sizes are shown) or plain bytes; null when it is none of these. */
export function parseSize(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)\s*([kmgt]?)b?$/i.exec(text.trim());
  if (match === null) return null;
  const unit = { '': 1, k: 1e3, m: 1e6, g: 1e9, t: 1e12 }[(match[2] ?? '').toLowerCase() as '' | 'k' | 'm' | 'g' | 't'];
  return Math.round(Number(match[1]) * unit);
}
