/** The npm package a bare specifier names: "@balena/udif/dist/x.js" → "@balena/udif". */
export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? specifier);
}
