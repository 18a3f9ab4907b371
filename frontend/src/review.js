// The review queue page: a project's edge proposals, each with both memories' text, reviewed with the
// keyboard (j/k move, a approve, r reject, l relabel, x select, u undo) or in bulk. Acts go through the
// curation API; the list updates from its answers.

import { CurationClient, Toast } from "./curate.js";
import { $, clear, h } from "./dom.js";
import { formatDateTime, formatNumber, gettext, interpolate, ngettext } from "./i18n.js";
import { makeLabels } from "./labels.js";
import { relationColor, textOn } from "./graph/style.js";

const PAGE = 200;
const LOG_PAGE = 30;

function actLabel(kind) {
  const labels = {
    "edge.approve": gettext("approved an edge"), "edge.reject": gettext("rejected an edge"),
    "edge.relabel": gettext("relabelled an edge"), "edge.draw": gettext("drew an edge"),
    "edge.delete": gettext("deleted an edge"), "memory.sensitive": gettext("changed a sensitive mark"),
    "memory.status": gettext("archived or restored"), "memory.kind": gettext("corrected a kind"),
    "entity.rename": gettext("renamed an entity"), "entity.merge": gettext("merged entities"),
    "entity.split": gettext("split an alias off"), "entity.flag": gettext("settled a duplicate flag"),
  };
  return labels[kind] || kind;
}

class ReviewQueue {
  constructor(config) {
    this.config = config;
    this.labels = makeLabels(config.choices);
    this.client = new CurationClient(config);
    this.toast = new Toast($("#toast"));
    this.rows = [];
    this.total = 0;
    this.reviewed = new Set();
    this.selected = new Set();
    this.cursor = 0;
    this.undoStack = [];
  }

  async load() {
    const order = $("#review-order").value;
    const session = new URLSearchParams(location.search).get("session");
    const url = `${this.config.urls.edges}?needs_review=true&status=inferred&order=${order}&limit=${PAGE}`
      + (session && /^\d+$/.test(session) ? `&session=${session}` : "");
    const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!response.ok) {
      $("#review-summary").textContent = interpolate(gettext("Could not load the queue (%s)."), [response.status]);
      return;
    }
    const body = await response.json();
    this.rows = body.results;
    this.total = body.count;
    this.reviewed.clear();
    this.selected.clear();
    this.cursor = 0;
    this.render();
    await Promise.all([this.loadLog(), this.loadDuplicates()]);
    document.documentElement.dataset.reviewReady = "1";
  }

  /** The engine's possibly_same_as flags: merge the pair, or say they are different. */
  async loadDuplicates() {
    const response = await fetch(`${this.config.urls.entities}?flagged=true&limit=100`,
      { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!response.ok) return;
    const { results } = await response.json();
    const pairs = results.flatMap((entity) => entity.possibly_same_as.map((other) => ({ entity, other })));
    $("#duplicates").hidden = !pairs.length;
    const list = clear($("#duplicate-list"));
    for (const { entity, other } of pairs) {
      const act = async (promise, message) => {
        try {
          await promise;
          this.toast.show(message);
        } catch (error) {
          this.toast.failed(error);
        }
        await Promise.all([this.loadDuplicates(), this.loadLog()]);
      };
      list.append(h("li", { class: "duplicate", dataset: { entityId: entity.id, otherId: other.id } },
        h("span", null, h("strong", null, entity.name), " ≈ ", h("strong", null, other.name || `#${other.id}`),
          " ", h("span", { class: "muted small" }, interpolate(gettext("similarity %s"), [formatNumber(other.similarity)]))),
        this.config.canCurate ? h("span", { class: "duplicate-actions" },
          h("button", { type: "button", class: "btn btn-small", onclick: () => act(this.client.send("POST",
            this.config.urls.entityMerge.replace("/0/", `/${entity.id}/`), { duplicate_id: other.id }),
          interpolate(gettext("%(from)s merged into %(into)s."), { from: other.name, into: entity.name }, true)) },
          interpolate(gettext("Merge into %s"), [entity.name])),
          h("button", { type: "button", class: "btn btn-small", onclick: () => act(this.client.send("POST",
            this.config.urls.entityDismiss.replace("/0/", `/${entity.id}/`), { other_id: other.id }),
          gettext("Marked as different.")) }, gettext("Not the same"))) : null));
    }
  }

  /** The curation log: the project's latest acts, each undoable once (not an undo itself). */
  async loadLog() {
    const response = await fetch(`${this.config.urls.acts}?limit=${LOG_PAGE}`,
      { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!response.ok) return;
    const { results } = await response.json();
    const body = clear($("#acts-table tbody"));
    if (!results.length) body.append(h("tr", null, h("td", { colspan: "7", class: "muted small" }, gettext("No curation acts yet."))));
    for (const act of results) {
      const undoable = this.config.canCurate && !act.undone && act.kind !== "undo";
      body.append(h("tr", { dataset: { actId: act.id, kind: act.kind } },
        h("td", { class: "num" }, String(act.id)),
        h("td", null, act.kind === "undo" ? interpolate(gettext("undo of #%s"), [act.undoes_id]) : actLabel(act.kind)),
        h("td", { class: "small" }, `${act.object_type} #${act.object_id}`),
        h("td", { class: "small" }, act.actor_name || act.actor),
        h("td", { class: "small" }, act.reason || "–"),
        h("td", { class: "small nowrap" }, formatDateTime(act.created_at)),
        h("td", null, act.undone ? h("span", { class: "muted small" }, gettext("undone"))
          : undoable ? h("button", { type: "button", class: "btn btn-small", onclick: async () => {
            try {
              await this.client.undo(act.id);
              this.toast.show(gettext("Undone."));
            } catch (error) {
              this.toast.failed(error);
            }
            await this.loadLog();
          } }, gettext("Undo")) : null)));
    }
  }

  summary() {
    if (!this.total) return gettext("Nothing to review: every proposal has been decided.");
    return interpolate(gettext("%(done)s of %(total)s reviewed"), { done: this.reviewed.size, total: this.total }, true);
  }

  render() {
    $("#review-summary").textContent = this.summary();
    const list = clear($("#review-list"));
    this.rows.forEach((row, index) => list.append(this.item(row, index)));
    const bulk = $("#review-bulk");
    bulk.hidden = !this.config.canCurate || !this.selected.size;
    $("#review-selected").textContent = interpolate(ngettext("%s selected", "%s selected", this.selected.size),
      [this.selected.size]);
    const current = list.children[this.cursor];
    if (current) current.scrollIntoView({ block: "nearest" });
  }

  item(row, index) {
    const done = this.reviewed.has(row.id);
    const relation = h("span", { class: "chip", style: { background: relationColor(row.relation),
      color: textOn(relationColor(row.relation)) } }, this.labels.relation(row.relation));
    const session = this.config.urls.session.replace("/0/", `/${row.session_id}/`);
    const controls = this.config.canCurate && !done ? h("div", { class: "review-actions" },
      h("button", { type: "button", class: "btn btn-small primary", onclick: () => this.decide(index, "approved") },
        gettext("Approve")),
      h("button", { type: "button", class: "btn btn-small", onclick: () => this.decide(index, "rejected") },
        gettext("Reject")),
      h("select", { class: "relabel-select", "aria-label": gettext("Relation"),
        onchange: (event) => this.relabel(index, event.target.value) },
      this.config.relations.map((r) => h("option", { value: r, selected: r === row.relation }, this.labels.relation(r)))))
      : null;
    return h("li", {
      class: `review-item${index === this.cursor ? " current" : ""}${done ? " done" : ""}`,
      dataset: { edgeId: row.id, status: row.status }, onclick: () => { this.cursor = index; this.render(); },
    },
    this.config.canCurate ? h("input", { type: "checkbox", class: "review-check", "aria-label": gettext("Select"),
      checked: this.selected.has(row.id), disabled: done,
      onclick: (event) => { event.stopPropagation(); this.toggle(row.id); } }) : null,
    h("div", { class: "review-main" },
      h("div", { class: "review-meta small" }, relation, " ",
        h("span", { class: "muted" }, interpolate(gettext("confidence %(c)s · used in %(n)s recalls · %(origin)s"),
          { c: formatNumber(row.confidence), n: row.impact, origin: this.labels.origin(row.origin) }, true)),
        done ? h("span", { class: `chip chip-edge-${row.status}` }, this.labels.edgeStatus(row.status)) : null,
        " ", h("a", { href: `${session}#graph`, class: "small" }, interpolate(gettext("session #%s"), [row.session_id]))),
      h("div", { class: "review-pair" },
        h("p", { class: "review-memory" }, h("strong", null, `#${row.source_id} `), row.source_label),
        h("p", { class: "review-arrow muted" }, `↓ ${this.labels.relation(row.relation)}`),
        h("p", { class: "review-memory" }, h("strong", null, `#${row.target_id} `), row.target_label)),
      row.rationale ? h("p", { class: "small muted review-rationale" }, row.rationale) : null),
    controls);
  }

  toggle(id) {
    if (this.selected.has(id)) this.selected.delete(id);
    else this.selected.add(id);
    this.render();
  }

  async act(promise, rows, message) {
    try {
      const answer = await promise;
      const acts = answer.acts || [answer.act];
      const edges = answer.edges || [answer.edge];
      for (const edge of edges) {
        const index = this.rows.findIndex((r) => r.id === edge.id);
        if (index >= 0) this.rows[index] = edge;
        this.reviewed.add(edge.id);
        this.selected.delete(edge.id);
      }
      this.undoStack.push(acts.map((a) => a.id));
      this.cursor = Math.min(this.rows.length - 1, Math.max(...rows) + 1);
      this.render();
      this.loadLog();
      this.toast.show(message, { undo: () => this.undo() });
    } catch (error) {
      this.toast.failed(error);
    }
  }

  decide(index, status) {
    const row = this.rows[index];
    if (!row || this.reviewed.has(row.id)) return;
    this.act(this.client.edge(row.id, { status }), [index],
      status === "approved" ? gettext("Edge approved.") : gettext("Edge rejected."));
  }

  relabel(index, relation) {
    const row = this.rows[index];
    if (!row || relation === row.relation) return;
    this.act(this.client.edge(row.id, { relation }), [index],
      interpolate(gettext("Relabelled as %s."), [this.labels.relation(relation)]));
  }

  bulk(status) {
    const ids = [...this.selected];
    if (!ids.length) return;
    const indexes = ids.map((id) => this.rows.findIndex((r) => r.id === id));
    this.act(this.client.send("POST", this.config.urls.bulk, { edge_ids: ids, status }), indexes,
      interpolate(ngettext("%s edge decided.", "%s edges decided.", ids.length), [ids.length]));
  }

  async undo() {
    const acts = this.undoStack.pop();
    if (!acts) return;
    try {
      for (const id of acts) {
        const answer = await this.client.undo(id);
        const index = this.rows.findIndex((r) => r.id === answer.edge.id);
        if (index >= 0) this.rows[index] = answer.edge;
        this.reviewed.delete(answer.edge.id);
      }
      this.render();
      this.loadLog();
      this.toast.show(gettext("Undone."));
    } catch (error) {
      this.toast.failed(error);
    }
  }

  key(event) {
    if (event.target.closest("select, input[type=text]") || event.metaKey || event.ctrlKey || event.altKey) return;
    const move = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1 }[event.key];
    if (move) {
      this.cursor = Math.max(0, Math.min(this.rows.length - 1, this.cursor + move));
      this.render();
    } else if (!this.config.canCurate) {
      return;
    } else if (event.key === "a") this.decide(this.cursor, "approved");
    else if (event.key === "r") this.decide(this.cursor, "rejected");
    else if (event.key === "x" && this.rows[this.cursor]) this.toggle(this.rows[this.cursor].id);
    else if (event.key === "u") this.undo();
    else if (event.key === "l") {
      const select = $("#review-list").children[this.cursor]?.querySelector(".relabel-select");
      if (select) select.focus();
    } else return;
    event.preventDefault();
  }
}

const queue = new ReviewQueue(JSON.parse($("#cw-config").textContent));
document.addEventListener("keydown", (event) => queue.key(event));
$("#review-order").addEventListener("change", () => queue.load());
$("#bulk-approve").addEventListener("click", () => queue.bulk("approved"));
$("#bulk-reject").addEventListener("click", () => queue.bulk("rejected"));
window.cwReview = queue;
queue.load();
