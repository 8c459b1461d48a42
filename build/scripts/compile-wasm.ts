/**
 * Compiles writer/xxh64.wat to the base64 module the engine embeds. The output is committed
 * so that installing Sluice needs no WebAssembly toolchain; test/writer/xxh64.linux.test.ts fails if the
 * committed bytes and the source ever disagree.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import wabt from 'wabt';

/** Paths from the package root, where npm runs scripts and vitest runs tests. */
export const WAT_PATH = resolve('writer/xxh64.wat');
export const MODULE_PATH = resolve('writer/xxh64-module.ts');

export async function compileXxh64(watPath: string): Promise<string> {
  const toolkit = await wabt();
  const module = toolkit.parseWat('xxh64.wat', readFileSync(watPath, 'utf8'));
  try {
    return Buffer.from(module.toBinary({}).buffer).toString('base64');
  } finally {
    module.destroy();
  }
}

export function moduleSource(base64: string): string {
  return `// Generated from xxh64.wat by build/scripts/compile-wasm.ts (npm run build:wasm). Do not edit.\nexport const XXH64_WASM_BASE64 =\n  '${base64}';\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(MODULE_PATH, moduleSource(await compileXxh64(WAT_PATH)));
  process.stdout.write(`wrote ${MODULE_PATH}\n`);
}
