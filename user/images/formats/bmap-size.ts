/**
 * A bmap is a small XML file; anything this large is not one. In a module of its own: a bmap file
 * is read within this bound before its parser (bmap.ts, with fast-xml-parser) is loaded, and most
 * images have no bmap. Loading the parser took about 12 ms of each probe process's start
 * (importing probe.js: 73 ms with it, 61 ms without).
 */
export const MAX_BMAP_BYTES = 16 * 1024 * 1024;
