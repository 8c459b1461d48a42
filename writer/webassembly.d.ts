// TypeScript ships WebAssembly's types only with the DOM library, which Node code must not see.
// The writer needs the few constructors below (see job-memory.ts and xxh64.ts).
declare namespace WebAssembly {
  interface MemoryDescriptor {
    initial: number;
    maximum?: number;
  }
  interface Memory {
    readonly buffer: ArrayBuffer;
  }
  const Memory: { new (descriptor: MemoryDescriptor): Memory };
  interface Module {
    readonly __brand: 'WebAssembly.Module';
  }
  const Module: { new (bytes: Uint8Array): Module };
  interface Instance {
    readonly exports: Record<string, unknown>;
  }
  const Instance: { new (module: Module, imports: Record<string, Record<string, unknown>>): Instance };
}
