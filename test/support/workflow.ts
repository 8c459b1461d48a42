/**
 * Runs a GitHub workflow's `run:` steps here, the way a runner does: every `${{ }}` in the script,
 * the step's env and its `if:` evaluated by GitHub's own expression library (@actions/expressions)
 * against the job's matrix entry, and the result written to a file that `bash --noprofile --norc
 * -eo pipefail` runs (GitHub's command for `shell: bash`). An expression's value goes into the
 * script as text, newlines included: exactly what broke the release's "Sizes" step.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { data, Evaluator, Lexer, Parser } from '@actions/expressions';

export interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
  'working-directory'?: string;
}

/** The contexts a step sees: matrix, runner, github, secrets... as plain values. */
export type Contexts = Record<string, unknown>;

function evaluate(expression: string, contexts: Contexts): data.ExpressionData {
  const lexed = new Lexer(expression).lex();
  const tree = new Parser(lexed.tokens, Object.keys(contexts), []).parse();
  const context = JSON.parse(JSON.stringify(contexts), data.reviver) as data.Dictionary;
  return new Evaluator(tree, context).evaluate();
}

/** GitHub's truthiness: null, false, 0, NaN and '' are false. */
function truthy(value: data.ExpressionData): boolean {
  switch (value.kind) {
    case data.Kind.Null:
      return false;
    case data.Kind.Boolean:
      return value.coerceString() === 'true';
    case data.Kind.Number:
      return value.number() !== 0 && !Number.isNaN(value.number());
    case data.Kind.String:
      return value.coerceString() !== '';
    default:
      return true;
  }
}

/** Every `${{ expression }}` in `text` replaced by its value as a string. */
export function expand(text: string, contexts: Contexts): string {
  return text.replace(/\$\{\{(.*?)\}\}/gs, (_, expression: string) => evaluate(expression, contexts).coerceString());
}

/** Whether a step with this `if:` runs (an `if:` is an expression with or without `${{ }}`). */
export function stepRuns(step: Step, contexts: Contexts): boolean {
  if (step.if === undefined) return true;
  const bare = /^\s*\$\{\{(.*)\}\}\s*$/s.exec(step.if)?.[1] ?? step.if;
  return truthy(evaluate(bare, contexts));
}

export interface StepRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The variables a runner sets from the contexts (a few of them: those the steps here read). */
function defaultVariables(contexts: Contexts): Record<string, string> {
  const github = (contexts['github'] ?? {}) as Record<string, string>;
  const runner = (contexts['runner'] ?? {}) as Record<string, string>;
  const variables: Record<string, string | undefined> = {
    GITHUB_REF: github['ref'],
    GITHUB_REF_NAME: github['ref_name'],
    GITHUB_REPOSITORY: github['repository'],
    GITHUB_SERVER_URL: github['server_url'],
    RUNNER_OS: runner['os'],
  };
  return Object.fromEntries(
    Object.entries(variables).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

/** Runs one `run:` step in `workspace`, with `env` (PATH, HOME, RUNNER_TEMP, GITHUB_ENV) and the runner's own variables. */
export function runStep(step: Step, contexts: Contexts, workspace: string, env: Record<string, string>): StepRun {
  const script = join(env['RUNNER_TEMP'] ?? workspace, `step-${Math.random().toString(36).slice(2)}.sh`);
  writeFileSync(script, expand(step.run ?? '', contexts));
  const stepEnv = Object.fromEntries(
    Object.entries(step.env ?? {}).map(([key, value]) => [key, expand(String(value), contexts)]),
  );
  const run = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], {
    cwd: join(workspace, step['working-directory'] ?? '.'),
    env: { ...env, ...defaultVariables(contexts), ...stepEnv },
    encoding: 'utf8',
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}
