/**
 * exFAT's up-case table: how the volume compares file names without regard to case. It is built
 * from the runtime's own Unicode case mapping (a character whose upper case is one BMP character
 * maps to it; every other maps to itself) and stored compressed as the specification allows: a
 * run of characters that map to themselves becomes 0xFFFF and the run's length. The table travels
 * with the volume and its checksum is in the root directory, so every reader uses these mappings.
 */
const CHARACTERS = 0x10000;
const RUN_MARK = 0xffff;
/** A run shorter than this is cheaper stored as it is (two entries mark a run). */
const MIN_RUN = 3;

let table: Uint8Array | null = null;

function upperOf(code: number): number {
  const upper = String.fromCharCode(code).toUpperCase();
  return upper.length === 1 ? upper.charCodeAt(0) : code;
}

export function upcaseTable(): Uint8Array {
  if (table !== null) return table;
  const entries: number[] = [];
  for (let code = 0; code < CHARACTERS;) {
    let run = 0;
    while (code + run < CHARACTERS && upperOf(code + run) === code + run) run++;
    // 0xFFFF itself maps to itself, and stored alone it would read as a run mark.
    if (run >= MIN_RUN || (run > 0 && code + run === CHARACTERS)) {
      entries.push(RUN_MARK, run);
      code += run;
    } else {
      entries.push(upperOf(code));
      code++;
    }
  }
  const bytes = new Uint8Array(entries.length * 2);
  const view = new DataView(bytes.buffer);
  entries.forEach((entry, i) => view.setUint16(i * 2, entry, true));
  table = bytes;
  return bytes;
}
