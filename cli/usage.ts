/** `sluice --help`, rendered from the command table so that help and the commands cannot drift. */
import { type Command, COMMANDS } from './command-table.js';

const WIDTH = 100;
/** Where a command's summary starts, and where a flag's explanation starts. */
const SUMMARY_COLUMN = 48;
const FLAG_COLUMN = 20;

/** `text` broken at spaces into lines of at most `width` characters (a longer word keeps its own line). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  return line === '' ? lines : [...lines, line];
}

/** `head`, then `text` wrapped at `column`: beside the head when it fits, else on the lines below it. */
function entry(head: string, text: string, column: number): string {
  const body = wrap(text, WIDTH - column).map((line) => ' '.repeat(column) + line);
  if (head === '') return body.join('\n');
  if (body.length === 0) return head;
  if (head.length + 2 > column) return [head, ...body].join('\n');
  return [head.padEnd(column) + (body[0] ?? '').trimStart(), ...body.slice(1)].join('\n');
}

function commandHelp(command: Command): string {
  const forms = command.forms.map(([usage, summary]) =>
    usage === '' ? entry('', summary, FLAG_COLUMN) : entry(`  sluice ${usage}`, summary, SUMMARY_COLUMN),
  );
  const aliases = (command.aliases ?? []).map((alias) =>
    entry(`  sluice ${alias} ...`, `the same as sluice ${command.name}, by its former name`, SUMMARY_COLUMN),
  );
  const flags = (command.help ?? []).map(([flags, text]) =>
    flags === '' ? entry('', text, 4) : entry(`      ${flags}`, text, FLAG_COLUMN),
  );
  return [...forms, ...aliases, ...flags].join('\n');
}

export const USAGE = `Usage:
${COMMANDS.map(commandHelp).join('\n')}

${wrap(
  'Downloads that break off are resumed from where they stopped (5 tries in a row, 1 to 16 s apart). The image cache is in ~/.cache/sluice (Linux), ~/Library/Caches/Sluice (macOS) or %LOCALAPPDATA%\\Sluice\\Cache (Windows); SLUICE_CACHE_DIR names another.',
  WIDTH,
).join('\n')}

${wrap(
  'Exit codes: 0 success, 1 flash or verify failed, 2 usage error (or settings the image cannot take), 3 unsupported image format, 4 target refused for safety, 5 administrator rights not granted, 130 cancelled.',
  WIDTH,
).join('\n')}
`;
