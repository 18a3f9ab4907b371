// Why a memory may be out of date, as the session page's panel and the review queue tell it: which memory it
// depends on changed, how (superseded 15:00 → 18:00, now …), and through which edges. Rows come from
// GET …/memories/<id>/risks/ (or the list's `at_risk_why`), masked by the server for this reader.

import { h } from "./dom.js";
import { formatDateTime, formatNumber, gettext, interpolate, ngettext } from "./i18n.js";

export function changeName(change) {
  const names = {
    superseded: gettext("superseded"), corrected: gettext("corrected"), archived: gettext("archived"),
    forgotten: gettext("forgotten"),
  };
  return names[change] || String(change || "");
}

/** "superseded: 15:00 → 18:00", or the change alone when no value is known. */
export function changeText(row) {
  if (!row.before && !row.after) return changeName(row.change);
  return interpolate(gettext("%(change)s: %(before)s → %(after)s"),
    { change: changeName(row.change), before: row.before || "–", after: row.after || "–" }, true);
}

/** "causal (declared by the agent) → elaborates": the relations parent first, each with its origin when known. */
export function throughText(row, { labels, originOf = () => null }) {
  return (row.relations || []).map((relation, index) => {
    const origin = originOf((row.path || [])[index]);
    return origin ? interpolate(gettext("%(relation)s (%(origin)s)"),
      { relation: labels.relation(relation), origin: labels.origin(origin) }, true) : labels.relation(relation);
  }).join(" → ");
}

/**
 * One reason as a list item: "Depends on: #12 … — superseded: 15:00 → 18:00, now: #14 …" and, under it,
 * "through causal (declared by the agent), 1 hop · risk 1 · <since>".
 * @param memoryLink (id, label) → the element naming a memory (a button selecting it, or plain text)
 * @param originOf edge id → its origin, when the page holds the edge
 */
export function riskItem(row, { labels, memoryLink, originOf }) {
  const named = (id, label) => memoryLink(id, label || interpolate(gettext("memory #%s"), [id]));
  // A space after "Depends on:" and ", now:", not after a full-width colon ("依赖于：").
  const spaced = (text) => (/[：，]$/.test(text) ? text : `${text} `);
  return h("li", { class: "risk", dataset: { parentId: row.parent_id } },
    h("p", { class: "risk-what" },
      h("strong", null, spaced(gettext("Depends on:"))), named(row.parent_id, row.parent_label), " — ",
      h("span", { class: "risk-change" }, changeText(row)),
      row.replaced_by_id ? [spaced(gettext(", now:")), named(row.replaced_by_id, row.replaced_by_label)] : null),
    h("p", { class: "muted small risk-how" },
      interpolate(ngettext("through %(relations)s, %(hops)s hop", "through %(relations)s, %(hops)s hops", row.hops),
        { relations: throughText(row, { labels, originOf }), hops: row.hops }, true),
      " · ", interpolate(gettext("risk %s"), [formatNumber(row.risk)]),
      row.since ? ` · ${formatDateTime(row.since)}` : null));
}
