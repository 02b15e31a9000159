import { fileURLToPath } from "node:url";

/**
 * The node arguments that run a bench's TypeScript compiled as the package is built (as-built-loader.mjs): for every
 * process a bench starts, so each contender's code runs as it ships.
 */
export const AS_BUILT: readonly string[] = [
  "--import",
  fileURLToPath(new URL("./as-built-loader.mjs", import.meta.url)),
];
