// @ts-check
// GPUs to pick from: name → memory (GiB, as marketed). The ids are names core's GPU catalog
// accepts in an inference request's "gpu" field; the memory is what the planner budgets.

/** @typedef {{id: string, name: string, gib: number}} Gpu */

/** @type {Gpu[]} */
export const GPUS = [
  { id: 't4', name: 'NVIDIA T4', gib: 16 },
  { id: '4080', name: 'NVIDIA RTX 4080', gib: 16 },
  { id: '3090', name: 'NVIDIA RTX 3090', gib: 24 },
  { id: '4090', name: 'NVIDIA RTX 4090', gib: 24 },
  { id: 'a10g', name: 'NVIDIA A10', gib: 24 },
  { id: 'l4', name: 'NVIDIA L4', gib: 24 },
  { id: '5090', name: 'NVIDIA RTX 5090', gib: 32 },
  { id: 'v100', name: 'NVIDIA V100 32GB', gib: 32 },
  { id: 'a100-40gb', name: 'NVIDIA A100 40GB', gib: 40 },
  { id: 'a6000', name: 'NVIDIA RTX A6000', gib: 48 },
  { id: 'l40s', name: 'NVIDIA L40S', gib: 48 },
  { id: 'a100', name: 'NVIDIA A100 80GB', gib: 80 },
  { id: 'h100', name: 'NVIDIA H100 SXM', gib: 80 },
  { id: 'mi250x', name: 'AMD Instinct MI250X', gib: 128 },
  { id: 'h200', name: 'NVIDIA H200', gib: 141 },
  { id: 'b200', name: 'NVIDIA B200', gib: 180 },
  { id: 'mi300x', name: 'AMD Instinct MI300X', gib: 192 },
];

/** @param {string} id */
export function gpuById(id) {
  return GPUS.find((g) => g.id === id) || GPUS.find((g) => g.id === '4090');
}
