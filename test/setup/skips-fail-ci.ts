/**
 * A reporter that fails a CI run on Linux in which any test was skipped, naming each: a green run
 * that skipped a test claims what was never checked. Tests of another OS are not skipped here but
 * left out (vitest.config.ts: *.win32.* and *.darwin.* files run on their OS only), and device tests
 * stop the run before they could skip (require-root.ts).
 */
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export default class SkipsFailCi implements Reporter {
  onTestRunEnd(testModules: readonly TestModule[]): void {
    const skipped = testModules.flatMap((module) =>
      [...module.children.allTests('skipped')].map(
        (test) => `${relative(process.cwd(), module.moduleId)}: ${test.fullName}`,
      ),
    );
    if (skipped.length === 0) return;
    console.error(`CI runs every test; skipped (${skipped.length}):\n  ${skipped.join('\n  ')}`);
    process.exitCode = 1;
  }
}
