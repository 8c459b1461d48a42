/**
 * Bundles each program Sluice starts as a process (node/process-entries.ts) from what tsc built
 * in out/run/, and writes out/run/bundles.json: the modules each bundle holds, which
 * test/architecture/helper-closure.test.ts holds to the layer rules (root's bundle holds only
 * root's layers). Rolldown is Vite's own bundler, already installed with it.
 *
 * Each program is bundled on its own, so no file in out/run/ is shared by two of them: root loads
 * only the helper's. Their lazily imported parts stay lazy, as chunks named after the program.
 * Packages (node_modules) and Node's built-ins stay imports: they load as they did, and a native
 * addon or a package's own files stay where the package expects them.
 */
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';
import { PROCESS_ENTRIES, type ProcessName } from '../../node/process-entries.js';

/** Where the bundles go: one directory below out/, as node/process-entries.ts expects. */
export const RUN_DIR = resolve('out/run');
export const MANIFEST = resolve(RUN_DIR, 'bundles.json');

/** For each bundle, the repository paths (from out/, tsc's .js) of the modules it holds. */
export type BundleManifest = Record<ProcessName, string[]>;

async function bundle(name: ProcessName): Promise<string[]> {
  const output = await build({
    input: { [name]: resolve('out', PROCESS_ENTRIES[name]) },
    platform: 'node',
    // A bare specifier (a package, node:*) is left to Node; only Sluice's own relative imports are bundled.
    external: (id, importer) => importer !== undefined && !id.startsWith('.') && !isAbsolute(id),
    logLevel: 'warn',
    write: true,
    output: { dir: RUN_DIR, format: 'esm', entryFileNames: '[name].js', chunkFileNames: `${name}-[name]-[hash].js`, sourcemap: true },
  });
  const modules = output.output.flatMap((file) => (file.type === 'chunk' ? file.moduleIds : []));
  return modules.map((id) => relative(resolve('out'), id).split('\\').join('/')).sort();
}

export async function bundleProcesses(): Promise<BundleManifest> {
  rmSync(RUN_DIR, { recursive: true, force: true });
  mkdirSync(RUN_DIR, { recursive: true });
  const manifest = {} as BundleManifest;
  for (const name of Object.keys(PROCESS_ENTRIES) as ProcessName[]) manifest[name] = await bundle(name);
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
  // package.json "bin": npm links the command to it.
  chmodSync(resolve(RUN_DIR, 'sluice.js'), 0o755);
  return manifest;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleProcesses();
