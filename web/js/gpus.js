// @ts-check
// GPUs to pick from: core's catalogue (supported.js, from supported()), smallest memory first.
// A GPU's id is its first alias, a name core's find_gpu accepts in an inference request's "gpu"
// field; its memory (GiB, as marketed) is what the planner budgets.

import { SUPPORTED } from './supported.js';

/** @typedef {{id: string, name: string, gib: number, aliases: string[]}} Gpu */

/** @type {Gpu[]} */
export const GPUS = SUPPORTED.gpus
  .map((/** @type {{name: string, aliases: string[], memory_bytes: number}} */ g) =>
    ({ id: g.aliases[0], name: g.name, gib: g.memory_bytes / 2 ** 30, aliases: g.aliases }))
  .sort((a, b) => a.gib - b.gib);

/**
 * The GPU a link names, by any of its aliases as core writes them (lowercase letters and digits:
 * "a100-40gb" is "a10040gb"); the RTX 4090 when none matches.
 * @param {string} id
 */
export function gpuById(id) {
  const key = id.toLowerCase().replace(/[^a-z0-9]/g, '');
  return GPUS.find((g) => g.aliases.includes(key)) || GPUS.find((g) => g.id === '4090');
}
