import { errorText } from '../common/domain/error-details.js';
import { COMMANDS } from './command-table.js';
import { EXIT } from './exit-codes.js';
import { flagsProblem, parseCommandLine } from './flags.js';
import { USAGE } from './usage.js';

function usageError(message: string): number {
  process.stderr.write(`sluice: ${message}\n\n${USAGE}`);
  return EXIT.usage;
}

/** Checks a command line against the flag and command tables, then runs its command. */
export async function main(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    return usageError(errorText(error));
  }
  const { values: flags, positionals } = parsed;
  const [name, ...operands] = positionals;
  if (flags.help || name === 'help') {
    process.stdout.write(USAGE);
    return EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name || (name !== undefined && c.aliases?.includes(name)));
  const problem = flagsProblem(flags, command?.name ?? name, operands[0]);
  if (problem !== null) return usageError(problem);
  if (name === undefined) return usageError('no command given');
  if (command === undefined) return usageError(`unknown command "${name}"`);
  const { min, max, error } = command.operands;
  if (operands.length < min || operands.length > max) return usageError(error(operands[0]));
  return command.run(flags, operands, usageError);
}

process.exitCode = await main(process.argv.slice(2));
