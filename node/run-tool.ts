import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/**
 * Runs a system tool, with `input` on its standard input, and returns its standard output; the
 * error names the tool and its stderr.
 * Tools run in the C locale, so the words Sluice matches and passes on are the same everywhere.
 */
export function runTool(file: string, args: readonly string[], timeoutMs = 15_000, input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      args,
      { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, LC_ALL: 'C' } },
      (error, stdout, stderr) => {
        // Some tools (diskutil) explain a failure on stdout rather than stderr.
        const said = [stderr.trim(), stdout.trim()].filter((text) => text !== '').join('\n');
        if (error) reject(new Error(`${file} ${args.join(' ')} failed: ${said || error.message}`));
        else resolve(stdout);
      },
    );
    // What the tool reads on its standard input (sfdisk's script); none: it reads an empty one. A
    // tool that exits without reading it closes the pipe (EPIPE): its exit status tells the rest.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input ?? '');
  });
}

/** The full path of an executable on PATH, or null when this system does not have it. */
export async function findTool(name: string): Promise<string | null> {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return null;
}
