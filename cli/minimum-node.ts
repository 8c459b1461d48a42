/**
 * The oldest Node major the `sluice` command runs on: the pinned Node's (package.json
 * devDependencies "node"; a test keeps them equal), the only one the tests run on. zstd in node:zlib
 * alone needs 22.15 or 23.8.
 */
export const MINIMUM_NODE_MAJOR = 24;
