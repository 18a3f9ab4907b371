// The review queue page: a project's edge proposals, each with both memories' text, reviewed with the
// keyboard (j/k move, a approve, r reject, l relabel, x select, u undo) or in bulk. Acts go through the
// curation API; the list updates from its answers.

import { CurationClient, Toast } from "./curate.js";
import { $, clear, fill, h, shorten } from "./dom.js";
import { formatDateTime, formatNumber, gettext, interpolate, ngettext } from "./i18n.js";
import { makeLabels } from "./labels.js";
import { kindColor, relationColor, textOn } from "./graph/style.js";
import { riskItem } from "./risks.js";

const PAGE = 200;
const LOG_PAGE = 30;

function actLabel(kind) {
  const labels = {
    "edge.approve": gettext("approved an edge"), "edge.reject": gettext("rejected an edge"),
    "edge.relabel": gettext("relabelled an edge"), "edge.draw": gettext("drew an edge"),
    "edge.delete": gettext("deleted an edge"), "memory.sensitive": gettext("changed a sensitive mark"),
    "memory.status": gettext("archived or restored"), "memory.kind": gettext("corrected a kind"),
    "memory.risk": gettext("confirmed a memory still holds"),
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
    this.atRisk = new AtRiskReview(config, { client: this.client, toast: this.toast, labels: this.labels,
      onChange: () => this.loadLog() });
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
    await Promise.all([this.loadLog(), this.loadDuplicates(), this.atRisk.load()]);
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
            await Promise.all([this.loadLog(), this.atRisk.load()]);
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

/** "Possibly out of date": memories something they depend on changed under (engine/risk.py), the ones stored recalls
 *  used most first, each with why and what settles it: still valid, archive, or superseded by another memory. */
class AtRiskReview {
  constructor(config, { client, toast, labels, onChange }) {
    Object.assign(this, { config, client, toast, labels, onChange });
    this.rows = [];
    this.picking = null; // the memory whose replacement is being picked
  }

  async load() {
    if (!this.config.urls.memories) return;
    const session = new URLSearchParams(location.search).get("session");
    const url = `${this.config.urls.memories}?at_risk=true&limit=1000`
      + (session && /^\d+$/.test(session) ? `&session=${session}` : "");
    let body;
    try {
      const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (!response.ok) return;
      body = await response.json();
    } catch {
      return;
    }
    // Most used in recalls first, then most at risk; a memory taken out of use since (superseded) needs nothing.
    this.rows = body.results.filter((m) => m.status === "active" && m.at_risk > 0)
      .sort((a, b) => (b.access_count || 0) - (a.access_count || 0) || b.at_risk - a.at_risk || b.id - a.id);
    this.render();
  }

  render() {
    const section = $("#at-risk");
    section.hidden = !this.rows.length;
    const jump = $("#at-risk-jump");
    jump.hidden = !this.rows.length;
    clear(jump).append(h("a", { href: "#at-risk" }, `⚠ ${interpolate(ngettext("%s memory possibly out of date",
      "%s memories possibly out of date", this.rows.length), [this.rows.length])}`));
    $("#at-risk-count").textContent = String(this.rows.length);
    fill($("#at-risk-list"), this.rows.map((row) => this.item(row)));
  }

  item(row) {
    const session = this.config.urls.session.replace("/0/", `/${row.session_id}/`);
    const kind = h("span", { class: "chip", style: { background: kindColor(row.kind), color: textOn(kindColor(row.kind)) } },
      this.labels.kind(row.kind));
    const masked = row.sensitive && row.content === "[sensitive]";
    const controls = this.config.canCurate ? h("div", { class: "review-actions" },
      h("button", { type: "button", class: "btn btn-small primary", dataset: { act: "still-valid" },
        title: gettext("You checked it: it still holds despite the change"),
        onclick: () => this.act(this.client.memory(row.id, { still_valid: true }), gettext("Marked as still valid.")) },
      gettext("Still valid")),
      h("button", { type: "button", class: "btn btn-small", dataset: { act: "archive" },
        title: gettext("Take it out of use (it is no longer recalled)"),
        onclick: () => this.act(this.client.memory(row.id, { status: "archived" }), gettext("Archived.")) },
      gettext("Archive")),
      h("button", { type: "button", class: "btn btn-small", dataset: { act: "superseded" }, "aria-expanded": String(this.picking === row.id),
        title: gettext("Pick the memory that replaces it: a supersedes edge from this memory to that one"),
        onclick: () => this.pick(row) }, gettext("Superseded by…"))) : null;
    return h("li", { class: "review-item at-risk-item", dataset: { memoryId: row.id } },
      h("div", { class: "review-main" },
        h("div", { class: "review-meta small" }, kind, " ",
          h("span", { class: "chip chip-at-risk" }, `⚠ ${interpolate(gettext("risk %s"), [formatNumber(row.at_risk)])}`), " ",
          h("span", { class: "muted" }, interpolate(ngettext("used in %s recall", "used in %s recalls", row.access_count || 0),
            [row.access_count || 0])),
          " ", h("a", { href: `${session}?memory=${row.id}`, class: "small" },
            interpolate(gettext("see it in session #%s"), [row.session_id]))),
        h("p", { class: `review-memory${masked ? " masked" : ""}` }, h("strong", null, `#${row.id} `),
          masked ? gettext("sensitive") : shorten(row.content, 300)),
        h("ul", { class: "risk-list" }, (row.at_risk_why || []).map((risk) => riskItem(risk, {
          labels: this.labels, originOf: () => null,
          memoryLink: (id, label) => h("span", { class: "risk-memory" }, `#${id} `, h("span", { class: "risk-label" }, `“${shorten(label, 80)}”`)),
        }))),
        this.picking === row.id ? this.picker(row) : null),
      controls);
  }

  /** "Superseded by…": the memories of its session, newest first, to pick the one that replaces it. */
  async pick(row) {
    this.picking = this.picking === row.id ? null : row.id;
    if (this.picking === null) {
      this.render();
      return;
    }
    try {
      const response = await fetch(`${this.config.urls.memories}?session=${row.session_id}&limit=200`,
        { credentials: "same-origin", headers: { Accept: "application/json" } });
      this.candidates = response.ok ? (await response.json()).results.filter((m) => m.id !== row.id && m.status === "active") : [];
    } catch {
      this.candidates = [];
    }
    this.render();
    const select = document.querySelector(`.at-risk-item[data-memory-id="${row.id}"] .supersede-pick select`);
    if (select) select.focus();
  }

  picker(row) {
    const select = h("select", { "aria-label": gettext("The memory that replaces it") },
      h("option", { value: "" }, gettext("Pick the memory that replaces it…")),
      (this.candidates || []).map((m) => h("option", { value: m.id },
        `#${m.id} ${m.sensitive && m.content === "[sensitive]" ? gettext("sensitive") : shorten(m.content, 70)}`)));
    return h("div", { class: "supersede-pick" }, select,
      h("button", { type: "button", class: "btn btn-small primary", dataset: { act: "supersede-create" }, onclick: () => {
        if (!select.value) return;
        this.picking = null;
        this.act(this.client.draw({ source_id: row.id, target_id: Number(select.value), relation: "supersedes" }),
          interpolate(gettext("#%(old)s marked superseded by #%(new)s."), { old: row.id, new: select.value }, true));
      } }, gettext("Create edge")),
      h("button", { type: "button", class: "btn btn-small", onclick: () => { this.picking = null; this.render(); } },
        gettext("Cancel")));
  }

  async act(promise, message) {
    try {
      const answer = await promise;
      const act = answer.act;
      this.toast.show(message, act && act.kind !== "undo" ? { undo: () => this.undo(act.id) } : {});
    } catch (error) {
      this.toast.failed(error);
    }
    await this.load();
    this.onChange();
  }

  async undo(actId) {
    try {
      await this.client.undo(actId);
      this.toast.show(gettext("Undone."));
    } catch (error) {
      this.toast.failed(error);
    }
    await this.load();
    this.onChange();
  }
}

const queue = new ReviewQueue(JSON.parse($("#cw-config").textContent));
document.addEventListener("keydown", (event) => queue.key(event));
$("#review-order").addEventListener("change", () => queue.load());
$("#bulk-approve").addEventListener("click", () => queue.bulk("approved"));
$("#bulk-reject").addEventListener("click", () => queue.bulk("rejected"));
window.cwReview = queue;
queue.load();
