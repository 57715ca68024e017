// @ts-check
// The only way this site makes elements: text goes in as text nodes, attributes as attributes —
// never innerHTML — so a model id, a config value or a Hub error message cannot become markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * el('p', {class: 'note'}, 'text', child, …) — children are nodes or strings (as text).
 * @param {string} tag
 * @param {Object<string, any>} [attrs]
 * @param {...(Node | string | number | null | undefined | false)} children
 * @returns {HTMLElement}
 */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

/**
 * The same for SVG elements.
 * @param {string} tag
 * @param {Object<string, any>} [attrs]
 * @param {...(Node | string | number | null | undefined | false)} children
 * @returns {SVGElement}
 */
export function svg(tag, attrs, ...children) {
  const node = /** @type {SVGElement} */ (document.createElementNS(SVG_NS, tag));
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

/** @param {Element} node @param {Object<string, any> | undefined} attrs */
function setAttrs(node, attrs) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
    else if (/^on/i.test(k)) throw new Error(`dom: refusing a string event handler (${k})`);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
}

/** @param {Node} node @param {any[]} children */
function append(node, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
}

/** Replaces every child of `node` with `children`. @param {Element} node @param {...any} children */
export function replaceChildren(node, ...children) {
  while (node.firstChild) node.removeChild(node.firstChild);
  append(node, children);
}
