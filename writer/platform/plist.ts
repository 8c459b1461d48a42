/** A value from an Apple XML property list, as `diskutil -plist` prints them. */
export type PlistValue = string | number | boolean | PlistValue[] | { [key: string]: PlistValue };

const TOKEN = /<(\/?)(dict|array|key|string|integer|real|true|false|data|date)(\/?)>|([^<]+)/g;

function decodeEntities(text: string): string {
  return text.replace(
    /&(lt|gt|amp|quot|apos);/g,
    (_, e: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" })[e] ?? '',
  );
}

/**
 * Parses the subset of XML plists that diskutil emits (dict, array, key, string, integer, real,
 * true, false, data, date). Not a general XML parser: it exists so that the macOS drive check
 * needs no dependency and can be unit-tested on any OS.
 */
export function parsePlist(xml: string): PlistValue {
  const body = xml.replace(/<\?xml[^>]*>|<!DOCTYPE[^>]*>|<\/?plist[^>]*>/g, '');
  const tokens: { close: boolean; tag: string | undefined; empty: boolean; text: string | undefined }[] = [];
  for (const m of body.matchAll(TOKEN)) {
    if (m[4] !== undefined && m[4].trim() === '') continue;
    tokens.push({ close: m[1] === '/', tag: m[2], empty: m[3] === '/', text: m[4] });
  }
  let i = 0;
  const next = () => {
    const t = tokens[i++];
    if (t === undefined) throw new Error('plist: unexpected end');
    return t;
  };
  const textUntilClose = (tag: string): string => {
    let text = '';
    for (let t = next(); !(t.close && t.tag === tag); t = next()) text += t.text ?? '';
    return decodeEntities(text.trim());
  };
  const value = (): PlistValue => {
    const t = next();
    switch (t.tag) {
      case 'dict': {
        const dict: { [key: string]: PlistValue } = {};
        if (t.empty) return dict;
        for (;;) {
          const k = next();
          if (k.close && k.tag === 'dict') return dict;
          if (k.tag !== 'key') throw new Error('plist: expected <key>');
          dict[textUntilClose('key')] = value();
        }
      }
      case 'array': {
        const list: PlistValue[] = [];
        if (t.empty) return list;
        for (;;) {
          if (tokens[i]?.close && tokens[i]?.tag === 'array') {
            i++;
            return list;
          }
          list.push(value());
        }
      }
      case 'true':
        return true;
      case 'false':
        return false;
      case 'integer':
      case 'real':
        return Number(textUntilClose(t.tag));
      case 'string':
      case 'data':
      case 'date':
        return t.empty ? '' : textUntilClose(t.tag);
      default:
        throw new Error(`plist: unexpected ${t.text ?? `<${t.tag ?? ''}>`}`);
    }
  };
  return value();
}
