// TypeScript ships WebAssembly's types only with the DOM library, which Node code must not see.
// The engine needs one constructor from it (see aligned-buffer.ts).
declare namespace WebAssembly {
  interface MemoryDescriptor {
    initial: number;
    maximum?: number;
  }
  interface Memory {
    readonly buffer: ArrayBuffer;
  }
  const Memory: { new (descriptor: MemoryDescriptor): Memory };
}
