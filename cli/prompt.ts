import { createInterface } from 'node:readline/promises';

/** Asks for a line of text on the terminal and returns it without surrounding spaces. */
export async function askText(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}

/** Asks a yes/no question on the terminal; anything but "y"/"yes" is no. */
export async function confirm(question: string): Promise<boolean> {
  return /^y(es)?$/i.test(await askText(`${question} [y/N] `));
}
