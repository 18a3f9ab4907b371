// The list view: the same memories the graph shows (same filters), sortable, search matches marked.

import { clear, h, shorten } from "./dom.js";
import { formatDateTime, formatNumber, gettext, interpolate, ngettext } from "./i18n.js";
import { kindColor, textOn } from "./graph/style.js";
import { filterReason } from "./reasons.js";

const PAGE = 300;

export class MemoryTable {
  constructor(root, { model, filters, labels, canSeeSensitive, onSelect }) {
    Object.assign(this, { root, model, filters, labels, canSeeSensitive, onSelect });
    this.sort = { key: "time", direction: 1 };
    this.limit = PAGE;
    this.selectedId = null;
    this.columns = [
      { key: "id", label: "#", value: (m) => m.id },
      { key: "kind", label: gettext("Kind"), value: (m) => m.kind },
      { key: "content", label: gettext("Content"), value: (m) => m.content.toLowerCase() },
      // Scores sort highest first on the first click: people look for the most important memories.
      { key: "importance", label: gettext("Importance"), value: (m) => m.importance, first: -1 },
      { key: "relevance", label: gettext("Relevance"), value: (m) => m.relevance ?? 0, first: -1 },
      { key: "novelty", label: gettext("Novelty"), value: (m) => m.novelty ?? 0, first: -1 },
      { key: "status", label: gettext("Status"), value: (m) => m.status },
      { key: "entities", label: gettext("Entities"), value: (m) => m.entities.join(", ").toLowerCase() },
      { key: "time", label: gettext("Occurred"), value: (m) => m.time },
    ];
  }

  /** @param {Set<number>} visibleIds the memories the graph shows */
  render(visibleIds) {
    const column = this.columns.find((c) => c.key === this.sort.key);
    const rows = [...visibleIds].map((id) => this.model.memories.get(id)).filter(Boolean);
    rows.sort((a, b) => {
      const x = column.value(a);
      const y = column.value(b);
      return (x < y ? -1 : x > y ? 1 : a.id - b.id) * this.sort.direction;
    });
    const head = h("tr", null, this.columns.map((c) => h("th", {
      class: `sortable col-${c.key}${c.key === this.sort.key ? (this.sort.direction > 0 ? " asc" : " desc") : ""}`,
      dataset: { sort: c.key }, scope: "col",
      onclick: () => {
        this.sort = { key: c.key, direction: c.key === this.sort.key ? -this.sort.direction : c.first ?? 1 };
        this.render(visibleIds);
      },
    }, c.label)));
    const shown = rows.slice(0, this.limit);
    const body = shown.map((m) => this._row(m));
    const more = rows.length > shown.length
      ? h("button", { type: "button", class: "btn btn-small", onclick: () => {
        this.limit = rows.length;
        this.render(visibleIds);
      } }, interpolate(gettext("Show all %s"), [rows.length]))
      : null;
    clear(this.root).append(
      h("p", { class: "muted small", id: "list-summary" }, interpolate(gettext("%(shown)s of %(total)s memories shown"),
        { shown: rows.length, total: this.model.memories.size }, true)),
      h("table", { class: "data-table", id: "memory-table" }, h("thead", null, head), h("tbody", null, body)),
      more);
  }

  _row(m) {
    const hidden = m.sensitive && (!this.canSeeSensitive || m.content === "[sensitive]");
    const match = this.filters.matches(m, this.canSeeSensitive);
    const classes = [match ? "match" : "", m.id === this.selectedId ? "selected" : "", `status-${m.status}`].join(" ");
    return h("tr", { class: classes, dataset: { memoryId: m.id }, onclick: () => this.onSelect({ type: "memory", id: m.id }) },
      h("td", { class: "num" }, String(m.id)),
      h("td", null, h("span", { class: "chip", style: { background: kindColor(m.kind), color: textOn(kindColor(m.kind)) } }, this.labels.kind(m.kind))),
      h("td", { class: "content-cell" }, hidden ? h("em", { class: "muted" }, `••• ${gettext("sensitive")}`) : shorten(m.content, 160)),
      h("td", { class: "num" }, formatNumber(m.importance, 1)),
      h("td", { class: "num col-relevance" }, formatNumber(m.relevance, 1)),
      h("td", { class: "num col-novelty" }, formatNumber(m.novelty, 1)),
      h("td", null, this.labels.status(m.status)),
      h("td", { class: "small col-entities" }, shorten(m.entities.join(", "), 60)),
      h("td", { class: "small nowrap" }, formatDateTime(m.occurredAt)));
  }
}

/** Interactions the selective filter dropped, with their scores and the reason. */
export class InteractionTable {
  constructor(root, { model, filters, labels, curation = null }) {
    Object.assign(this, { root, model, filters, labels, curation });
  }

  render() {
    const rows = [...this.model.interactions.values()]
      .filter((i) => i.status === "filtered" && this.filters.interactionVisible(i))
      .sort((a, b) => b.time - a.time || b.id - a.id);
    const score = (i, key) => h("td", { class: "num" }, formatNumber(i.scores[key], 2));
    clear(this.root).append(
      h("p", { class: "muted small", id: "interactions-summary" },
        interpolate(ngettext("%s interaction was not kept as a memory.", "%s interactions were not kept as memories.",
          rows.length), [rows.length])),
      h("table", { class: "data-table", id: "interaction-table" },
        h("thead", null, h("tr", null, ["#", gettext("Kind"), gettext("Content"), gettext("Relevance"), gettext("Importance"),
          gettext("Novelty"), gettext("Total"), gettext("Reason"), gettext("Occurred"), this.curation ? "" : null]
          .filter((label) => label !== null).map((label) => h("th", { scope: "col" }, label)))),
        h("tbody", null, rows.map((i) => h("tr", {
          class: this.filters.interactionMatches(i) ? "match" : "", dataset: { interactionId: i.id },
        },
        h("td", { class: "num" }, String(i.id)),
        h("td", { class: "small" }, this.labels.interactionKind(i.kind)),
        h("td", { class: "content-cell" }, shorten(i.content, 200)),
        score(i, "relevance"), score(i, "importance"), score(i, "novelty"), score(i, "total"),
        h("td", { class: "small" }, filterReason(i, this.labels)),
        h("td", { class: "small nowrap" }, formatDateTime(i.occurredAt)),
        this.curation ? h("td", null, this.curation.promote(i)) : null)))));
  }
}
