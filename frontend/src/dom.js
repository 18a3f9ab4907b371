// A tiny element builder: h("div", {class: "x", onclick}, child, "text", [more]). Text is never parsed as HTML.

export function h(tag, attrs = null, ...children) {
  const element = document.createElement(tag);
  if (attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
      else if (name === "class") element.className = value;
      else if (name === "dataset") Object.assign(element.dataset, value);
      else if (name === "style" && typeof value === "object") Object.assign(element.style, value);
      else element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : String(child));
  }
}

/** Replace an element's children (nulls skipped, arrays flattened, as h() does). */
export function fill(element, ...children) {
  append(clear(element), children);
  return element;
}

export function clear(element) {
  while (element.firstChild) element.removeChild(element.firstChild);
  return element;
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}

export function shorten(text, length) {
  const clean = String(text ?? "").replace(/\s+/g, " ").trim();
  return clean.length > length ? `${clean.slice(0, length - 1)}…` : clean;
}
