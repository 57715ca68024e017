// @ts-check
// embed.html: one <memfit-estimate> from the query (?model=…&dtypes=…&mode=…&revision=…&library=…&endpoint=…&gpu=…&context=…).
import '../embed.js';

const q = new URLSearchParams(location.search);
const widget = document.createElement('memfit-estimate');
for (const name of ['model', 'dtypes', 'mode', 'revision', 'library', 'endpoint', 'gpu', 'context']) {
  const v = q.get(name);
  if (v !== null) widget.setAttribute(name, v.slice(0, 2048));
}
document.getElementById('widget')?.append(widget);
