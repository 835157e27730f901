// Small DOM helpers shared by the demo page's panels.

/** A `<td>` with text, or with the text in `<code>` when `asCode`. */
export function cell(text, asCode = false) {
  const td = document.createElement("td");
  if (asCode) {
    const code = document.createElement("code");
    code.textContent = text;
    td.append(code);
  } else {
    td.textContent = text;
  }
  return td;
}

/** A `<tr>` of cells with `data-*` attributes, so tests and styles can find rows by meaning. */
export function row(cells, dataset = {}) {
  const tr = document.createElement("tr");
  for (const [key, value] of Object.entries(dataset)) {
    if (value !== undefined) tr.dataset[key] = value;
  }
  tr.append(...cells);
  return tr;
}

/** An element with a class and text. */
export function span(className, text) {
  const element = document.createElement("span");
  element.className = className;
  element.textContent = text;
  return element;
}
