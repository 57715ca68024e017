// @ts-check
// Dropped, chosen or pasted files: a config.json, safetensors files (only the header of each is
// read, with Blob.slice — never the weights) or a checkpoint index. What each is comes from its
// content, not its name, except for the binary safetensors.

import { headerLength, MAX_HEADER, parseIndex, HubError } from './hub.js';

/**
 * @typedef {{kind: 'config', name: string, config: object}
 *   | {kind: 'index', name: string, index: ReturnType<typeof parseIndex>}
 *   | {kind: 'safetensors', name: string, bytes: Uint8Array, size: number}} LocalFile
 */

/**
 * What a JSON text is: a config.json or an index.
 * @param {string} text @param {string} name
 * @returns {LocalFile}
 */
export function classifyJson(text, name) {
  let j;
  try { j = JSON.parse(text); } catch (e) {
    throw new Error(`${name}: not valid JSON (${e instanceof Error ? e.message : e})`);
  }
  if (!j || typeof j !== 'object' || Array.isArray(j)) throw new Error(`${name}: expected a JSON object`);
  if ('weight_map' in j) return { kind: 'index', name, index: parseIndex(text, name) };
  if ('model_type' in j || 'architectures' in j || 'architecture' in j || 'pretrained_cfg' in j) {
    return { kind: 'config', name, config: j };
  }
  throw new Error(`${name}: neither a config.json (no "model_type", "architectures" or "architecture") nor an index (no "weight_map")`);
}

/**
 * Reads one file: JSON as text, safetensors as its first 8 + N bytes only.
 * @param {File} file
 * @returns {Promise<LocalFile>}
 */
export async function readFile(file) {
  if (/\.safetensors$/i.test(file.name)) {
    const prefix = new Uint8Array(await file.slice(0, 8).arrayBuffer());
    const n = headerLength(prefix);
    if (n === null || n > MAX_HEADER || 8 + n > file.size) return { kind: 'safetensors', name: file.name, bytes: prefix, size: file.size };
    const bytes = new Uint8Array(await file.slice(0, 8 + n).arrayBuffer());
    return { kind: 'safetensors', name: file.name, bytes, size: file.size };
  }
  if (file.size > 50 * 1024 * 1024) throw new Error(`${file.name}: too big for a config.json or an index (${file.size} bytes)`);
  return classifyJson(await file.text(), file.name);
}

/**
 * Sorts a drop into one model: its config, its index and its safetensors files. With an index,
 * every shard it lists must be there; without one, every safetensors file is read.
 * @param {LocalFile[]} files
 */
export function assemble(files) {
  const configs = files.filter((f) => f.kind === 'config');
  const indexes = files.filter((f) => f.kind === 'index');
  const shards = /** @type {Extract<LocalFile, {kind: 'safetensors'}>[]} */ (files.filter((f) => f.kind === 'safetensors'));
  if (configs.length > 1) throw new Error(`${configs.length} config files: drop one model at a time`);
  if (indexes.length > 1) throw new Error(`${indexes.length} index files: drop one model at a time`);
  const config = configs.length ? /** @type {any} */ (configs[0]).config : null;
  const index = indexes.length ? /** @type {any} */ (indexes[0]).index : null;
  let ordered = shards;
  const warnings = [];
  if (index) {
    const byName = new Map(shards.map((s) => [s.name, s]));
    const missing = index.shards.filter((/** @type {string} */ s) => !byName.has(s.split('/').pop()));
    if (shards.length && missing.length) {
      throw new HubError('invalid_index', `the index lists ${missing.length} shard(s) that were not dropped: ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''}`);
    }
    ordered = index.shards.map((/** @type {string} */ s) => byName.get(s.split('/').pop())).filter(Boolean);
  } else if (shards.length > 1) {
    ordered = [...shards].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    warnings.push(`${shards.length} safetensors files and no index: all of them are read`);
  }
  return { config, index, shards: ordered, warnings };
}
