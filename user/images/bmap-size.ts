/**
 * A bmap is a small XML file; anything this large is not one. In a module of its own: a bmap file
 * is read within this bound before its parser (bmap.ts, with fast-xml-parser: about 20 ms of a
 * probe process's start) is loaded, and most images have no bmap.
 */
export const MAX_BMAP_BYTES = 16 * 1024 * 1024;
