// Translations come from Django's JavaScriptCatalog (djangojs domain), loaded before the bundle.
// Call sites use gettext/ngettext literally so that `makemessages -d djangojs` finds the strings.

const catalog = globalThis;

export function gettext(text) {
  return typeof catalog.gettext === "function" ? catalog.gettext(text) : text;
}

export function ngettext(singular, plural, count) {
  if (typeof catalog.ngettext === "function") return catalog.ngettext(singular, plural, count);
  return count === 1 ? singular : plural;
}

/** Replace %(name)s placeholders (named=true) or %s in order, like Django's interpolate(). */
export function interpolate(format, values, named = false) {
  if (typeof catalog.interpolate === "function") return catalog.interpolate(format, values, named);
  if (named) return format.replace(/%\(\w+\)s/g, (m) => String(values[m.slice(2, -2)]));
  let i = 0;
  return format.replace(/%s/g, () => String(values[i++]));
}

const language = () => document.documentElement.lang || "en";

export function formatDateTime(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toLocaleString(language(), { dateStyle: "medium", timeStyle: "short" });
}

export function formatTime(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toLocaleTimeString(language());
}

export function formatNumber(value, digits = 2) {
  if (value === null || value === undefined || value === "") return "–";
  const number = Number(value);
  return Number.isFinite(number) ? number.toLocaleString(language(), { maximumFractionDigits: digits }) : String(value);
}
