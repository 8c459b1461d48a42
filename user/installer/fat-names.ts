/**
 * A FAT directory's entries for long names: an 8.3 short name unique in its folder, and the VFAT
 * long-name entries before it (Microsoft's FAT specification, "Long Directory Entries"). A name
 * that is already an upper-case 8.3 name gets no long entries, as Windows writes it: firmware that
 * reads only short names (EFI/BOOT/BOOTX64.EFI) finds it all the same.
 */
import { jobError } from '../../common/domain/failure.js';

export const ENTRY_BYTES = 32;
const LONG_NAME_CHARS = 13;
const MAX_LONG_NAME = 255;
/** Characters a FAT long name may not hold. */
const FORBIDDEN = /["*/:<>?\\|\u0000-\u001f]/;
const SHORT_CHARS = /[^A-Z0-9!#$%&'()\-@^_`{}~]/g;

/** An upper-case 8.3 name as the 11 bytes of a directory entry, or null when `name` is not one. */
function exactShortName(name: string): string | null {
  const match = /^([A-Z0-9!#$%&'()\-@^_`{}~]{1,8})(?:\.([A-Z0-9!#$%&'()\-@^_`{}~]{1,3}))?$/.exec(name);
  if (match === null) return null;
  return (match[1] ?? '').padEnd(8) + (match[2] ?? '').padEnd(3);
}

/**
 * Short names for long ones, unique among `taken`: BASIS~N.EXT as Windows makes them. Each basis
 * counts on from the last number it gave, so a folder of 60,000 names that share a basis costs
 * 60,000 steps, not 60,000 squared.
 */
class ShortNames {
  private readonly next = new Map<string, number>();

  constructor(private readonly taken: Set<string>) {}

  make(name: string): string {
    const dot = name.lastIndexOf('.');
    const base = (dot > 0 ? name.slice(0, dot) : name).toUpperCase().replace(SHORT_CHARS, '') || 'FILE';
    const extension = (dot > 0 ? name.slice(dot + 1) : '').toUpperCase().replace(SHORT_CHARS, '').slice(0, 3).padEnd(3);
    const key = `${base.slice(0, 6)}.${extension}`;
    for (let n = this.next.get(key) ?? 1; ; n++) {
      const tail = `~${n}`;
      const short = (base.slice(0, 8 - tail.length) + tail).padEnd(8) + extension;
      if (!this.taken.has(short)) {
        this.next.set(key, n + 1);
        this.taken.add(short);
        return short;
      }
    }
  }
}

/** The short name's checksum that each long entry carries. */
function checksum(short: Uint8Array): number {
  let sum = 0;
  for (const byte of short) sum = (((sum & 1) << 7) + (sum >> 1) + byte) & 0xff;
  return sum;
}

function longEntries(name: string, short: Uint8Array): Uint8Array[] {
  const units = [...Buffer.from(name, 'utf16le').values()];
  const chars: number[] = [];
  for (let i = 0; i < units.length; i += 2) chars.push((units[i] ?? 0) | ((units[i + 1] ?? 0) << 8));
  const count = Math.ceil(chars.length / LONG_NAME_CHARS);
  // After the name: one 0x0000, then 0xFFFF to the entry's end.
  const padded = [
    ...chars,
    ...(chars.length % LONG_NAME_CHARS === 0 ? [] : [0]),
    ...new Array<number>(count * LONG_NAME_CHARS).fill(0xffff),
  ].slice(0, count * LONG_NAME_CHARS);
  const sum = checksum(short);
  const entries: Uint8Array[] = [];
  for (let n = count; n >= 1; n--) {
    const entry = new Uint8Array(ENTRY_BYTES);
    const view = new DataView(entry.buffer);
    entry[0] = n | (n === count ? 0x40 : 0);
    entry[11] = 0x0f;
    entry[13] = sum;
    const part = padded.slice((n - 1) * LONG_NAME_CHARS, n * LONG_NAME_CHARS);
    const at = [1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30];
    part.forEach((c, i) => view.setUint16(at[i] ?? 0, c, true));
    entries.push(entry);
  }
  return entries;
}

/** A folder's entry names: the long entries before each, and its 11-byte short name. */
export interface EntryName {
  long: Uint8Array[];
  short: Uint8Array;
}

/** A name FAT32 can hold, or a sentence saying why not. */
function checkedLongName(name: string, image: string): string {
  if (name.length > MAX_LONG_NAME || FORBIDDEN.test(name))
    throw jobError(
      'unsupported-format',
      `${image} holds a file named ${JSON.stringify(name)}, which a FAT32 volume cannot hold (at most 255 characters, none of " * / : < > ? \\ |).`,
    );
  return name;
}

/**
 * The names of one folder's entries, in order. FAT finds a name by either of its names in any
 * case, so two names alike but for case (README and readme, which ISO 9660 with Rock Ridge and
 * UDF allow) would hide one another: that is refused. Every name's upper-case form that is an 8.3
 * name is kept from the generated short names, so no long name is found as another's short name.
 */
export function folderNames(names: readonly string[], image: string, folder: string): EntryName[] {
  const lower = new Map<string, string>();
  for (const name of names) {
    const other = lower.get(checkedLongName(name, image).toLowerCase());
    if (other !== undefined)
      throw jobError(
        'unsupported-format',
        `${image} holds both ${JSON.stringify(other)} and ${JSON.stringify(name)} in the folder ${JSON.stringify(folder || '/')}: FAT32 does not tell names apart by case, so installer mode cannot copy both.`,
      );
    lower.set(name.toLowerCase(), name);
  }
  const taken = new Set<string>();
  for (const name of names) {
    const upper = exactShortName(name.toUpperCase());
    if (upper !== null) taken.add(upper);
  }
  const generated = new ShortNames(taken);
  return names.map((name) => {
    const exact = exactShortName(name);
    const shortText = exact ?? generated.make(name);
    const short = Uint8Array.from(shortText, (c) => c.charCodeAt(0));
    return { long: exact === null ? longEntries(name, short) : [], short };
  });
}
