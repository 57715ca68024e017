// @ts-check
// GPUs to pick from: core's catalogue (supported.js, from supported()), smallest memory first.
// A GPU's id is its first alias, a name core's find_gpu accepts in an inference request's "gpu"
// field; its memory (GiB, as marketed) is what the planner budgets.

import { SUPPORTED } from './supported.js';

/** @typedef {{id: string, name: string, gib: number, bytes: number, aliases: string[]}} Gpu */

/** @type {Gpu[]} */
export const GPUS = SUPPORTED.gpus
  .map((/** @type {{name: string, aliases: string[], memory_bytes: number}} */ g) =>
    ({ id: g.aliases[0], name: g.name, gib: g.memory_bytes / 2 ** 30, bytes: g.memory_bytes, aliases: g.aliases }))
  .sort((a, b) => a.gib - b.gib);

/**
 * The GPU a name or alias names, as core's find_gpu reads them (letters and digits, lowercase,
 * without the vendor: "RTX 4090", "4090", "NVIDIA A100 80GB", "a100-80gb"); undefined when none.
 * @param {string} text
 */
export function findGpu(text) {
  const key = text.toLowerCase().replace(/[^a-z0-9]/g, '').replace(/nvidia|geforce|amd|instinct|tesla/g, '');
  const bare = (/** @type {string} */ name) => name.toLowerCase().replace(/[^a-z0-9]/g, '').replace(/nvidia|geforce|amd|instinct|tesla/g, '');
  return GPUS.find((g) => g.aliases.includes(key) || g.aliases.some((a) => `rtx${a}` === key) || bare(g.name) === key);
}

/**
 * The GPU a link names (by name or alias); the RTX 4090 when none matches.
 * @param {string} id
 */
export function gpuById(id) {
  return findGpu(id) || GPUS.find((g) => g.id === '4090');
}
