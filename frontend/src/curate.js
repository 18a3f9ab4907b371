// Curation in the browser: the write client (session login + CSRF token) and the controls the side panel
// and the filtered-interactions tab show to curators (the Failed view's Retry uses the client too). The server decides (roles are enforced there);
// the page's graph changes arrive through the live stream like every other change.

import { failure, sendJson } from "./api.js";
import { clear, h } from "./dom.js";
import { gettext, interpolate, ngettext } from "./i18n.js";
import { isAtRisk } from "./model.js";

// Relations a person may give an edge (curation/services.py CURATED_RELATIONS).
const CURATED_RELATIONS = ["causal", "temporal", "conditional", "elaborates", "supersedes", "part_of", "references"];
const MEMORY_KINDS = ["fact", "preference", "constraint", "intent", "decision", "action", "result", "error", "event"];
const TOAST_MS = 8000;


export class CurationClient {
  constructor(config) {
    this.urls = config.urls;
  }

  send(method, url, body = null) {
    return sendJson(method, url, body);
  }

  edge(id, body) { return this.send("PATCH", this.urls.edge.replace("/0/", `/${id}/`), body); }
  draw(body) { return this.send("POST", this.urls.edges, body); }
  deleteEdge(id) { return this.send("DELETE", this.urls.edge.replace("/0/", `/${id}/`)); }
  memory(id, body) { return this.send("PATCH", this.urls.memory.replace("/0/", `/${id}/`), body); }
  async repeats(id) {
    const response = await fetch(this.urls.repeats.replace("/0/", `/${id}/`),
      { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!response.ok) throw await failure(response);
    return response.json();
  }
  undo(actId) { return this.send("POST", this.urls.undo.replace("/0/", `/${actId}/`), {}); }
  renameEntity(id, name) { return this.send("PATCH", this.urls.entity.replace("/0/", `/${id}/`), { name }); }
  splitEntity(id, alias) {
    return this.send("POST", this.urls.entitySplit.replace("/0/", `/${id}/`), { alias });
  }
  mergeEntity(survivorId, duplicateId) {
    return this.send("POST", this.urls.entityMerge.replace("/0/", `/${survivorId}/`), { duplicate_id: duplicateId });
  }
  promote(interactionId) { return this.send("POST", this.urls.promote.replace("/0/", `/${interactionId}/`)); }
  /** Run again what failed of an interaction (the Failed view); answers the interaction as it is now. */
  retry(interactionId) { return this.send("POST", this.urls.retry.replace("/0/", `/${interactionId}/`)); }
}

/** One message at a time at the bottom of the page, with an Undo button after an act. */
export class Toast {
  constructor(root) {
    this.root = root;
    this.timer = null;
  }

  show(text, { undo = null, error = false } = {}) {
    clearTimeout(this.timer);
    clear(this.root).append(h("div", { class: `toast${error ? " toast-error" : ""}`, role: "status" },
      h("span", null, text),
      undo ? h("button", { type: "button", class: "btn btn-small", id: "toast-undo", onclick: () => undo() },
        gettext("Undo")) : null));
    this.root.hidden = false;
    this.timer = setTimeout(() => { this.root.hidden = true; }, TOAST_MS);
  }

  /** An act the server refused, with its reason. */
  failed(error) {
    this.show(interpolate(gettext("Not done: %s"), [error.message]), { error: true });
  }
}

/** The buttons of the side panel and the filtered tab, for people who may curate. */
export class CurationControls {
  constructor({ client, toast, labels }) {
    Object.assign(this, { client, toast, labels });
    this.linking = null; // the memory a new edge starts from, while the person picks where it leads
    this.linkRelation = null; // the relation the form starts with ("Superseded by…": supersedes)
  }

  /** "Link to…": the next memory picked (graph or list) becomes the new edge's child. "Superseded by…" is the
   *  same flow with the supersedes relation: the memory picked replaces this one (a supersedes edge goes from the
   *  old memory to the new one). */
  startLink(memoryId, { relation = null } = {}) {
    this.linking = memoryId;
    this.linkRelation = relation;
    document.body.classList.add("linking");
    this.toast.show(relation === "supersedes"
      ? interpolate(gettext("Pick the memory that replaces #%s (Esc to cancel)."), [memoryId])
      : interpolate(gettext("Pick the memory that #%s leads to (Esc to cancel)."), [memoryId]));
  }

  stopLink() {
    this.linking = null;
    this.linkRelation = null;
    document.body.classList.remove("linking");
  }

  /** The form that draws the edge from `this.linking` to `targetId`. */
  linkForm(targetId, { model, onDone }) {
    const sourceId = this.linking;
    const label = (id) => {
      const memory = model.memories.get(id);
      return memory ? `#${id} ${memory.sensitive && memory.content === "[sensitive]" ? gettext("sensitive") : memory.content}` : `#${id}`;
    };
    const preset = this.linkRelation;
    const relation = h("select", { id: "link-relation", "aria-label": gettext("Relation") },
      CURATED_RELATIONS.map((r) => h("option", { value: r, selected: r === preset }, this.labels.relation(r))));
    const reason = h("input", { type: "text", id: "link-reason", maxlength: "500",
      placeholder: gettext("Reason (optional, kept in the curation log)") });
    const done = () => { this.stopLink(); onDone(); };
    const note = h("p", { class: "small link-note", id: "link-note" });
    const explain = () => {
      note.textContent = relation.value === "supersedes"
        ? interpolate(gettext("#%(old)s will be marked superseded: #%(new)s replaces it."), { old: sourceId, new: targetId }, true) : "";
      note.hidden = !note.textContent;
    };
    relation.addEventListener("change", explain);
    explain();
    return h("article", { class: "panel-body", id: "link-form" },
      h("h2", { class: "panel-title" }, preset === "supersedes" ? gettext("Superseded by…") : gettext("Draw an edge")),
      note,
      h("dl", { class: "facts" },
        h("dt", null, gettext("From (parent)")), h("dd", null, label(sourceId)),
        h("dt", null, gettext("To (child)")), h("dd", null, label(targetId)),
        h("dt", null, gettext("Relation")), h("dd", null, relation)),
      h("div", { class: "curate" }, reason,
        h("div", { class: "curate-row" },
          h("button", { type: "button", class: "btn btn-small primary", id: "link-create", onclick: async () => {
            const answer = await this.act(this.client.draw({ source_id: sourceId, target_id: targetId,
              relation: relation.value, reason: reason.value }), gettext("Edge drawn."));
            if (answer) done();
          } }, gettext("Create edge")),
          h("button", { type: "button", class: "btn btn-small", id: "link-cancel", onclick: done }, gettext("Cancel")))));
  }

  async act(promise, done) {
    try {
      const answer = await promise;
      const act = answer.act;
      this.toast.show(done, act && act.kind !== "undo" ? { undo: () => this.undo(act.id) } : {});
      return answer;
    } catch (error) {
      this.toast.failed(error);
      return null;
    }
  }

  undo(actId) {
    return this.act(this.client.undo(actId), gettext("Undone."));
  }

  // The one-click decisions, shared by the side panel's buttons and the graph's right-click menu.
  approve(edge) {
    return this.act(this.client.edge(edge.id, { status: "approved" }), gettext("Edge approved."));
  }

  reject(edge) {
    return this.act(this.client.edge(edge.id, { status: "rejected" }), gettext("Edge rejected."));
  }

  remove(edge) {
    return this.act(this.client.deleteEdge(edge.id), gettext("Edge deleted."));
  }

  toggleSensitive(memory, reason = "") {
    const sensitive = !memory.sensitive;
    return this.act(this.client.memory(memory.id, { sensitive, reason }),
      sensitive ? gettext("Marked sensitive.") : gettext("No longer sensitive."));
  }

  toggleArchive(memory, reason = "") {
    const archived = memory.status === "archived";
    return this.act(this.client.memory(memory.id, { status: archived ? "active" : "archived", reason }),
      archived ? gettext("Restored.") : gettext("Archived."));
  }

  /** A person checked an at-risk memory: it still holds (settles its flag; undoable). */
  stillValid(memory, reason = "") {
    return this.act(this.client.memory(memory.id, { still_valid: true, reason }), gettext("Marked as still valid."));
  }

  /** What settles an at-risk memory: it still holds, it is archived, or another memory replaces it. */
  riskActions(memory) {
    return h("div", { class: "curate-row risk-actions", id: "risk-actions" },
      h("button", { type: "button", class: "btn btn-small primary", id: "risk-still-valid",
        title: gettext("You checked it: it still holds despite the change"), onclick: () => this.stillValid(memory) },
      gettext("Still valid")),
      h("button", { type: "button", class: "btn btn-small", id: "risk-archive",
        title: gettext("Take it out of use (it is no longer recalled)"),
        onclick: () => this.act(this.client.memory(memory.id, { status: "archived" }), gettext("Archived.")) },
      gettext("Archive")),
      h("button", { type: "button", class: "btn btn-small", id: "risk-superseded",
        title: gettext("Pick the memory that replaces it: a supersedes edge from this memory to that one"),
        onclick: () => this.startLink(memory.id, { relation: "supersedes" }) },
      gettext("Superseded by…")));
  }

  /** The actions a right-click on the graph offers for a memory or an edge: [{label, run, danger}]. */
  menuActions(selection, model) {
    if (selection.type === "edge") {
      const edge = model.edges.get(selection.id);
      if (!edge) return [];
      return [
        { label: gettext("Approve"), run: () => this.approve(edge), disabled: edge.status === "approved" },
        { label: gettext("Reject"), run: () => this.reject(edge), disabled: edge.status === "rejected" },
        { label: gettext("Delete"), run: () => this.remove(edge), danger: true },
      ];
    }
    const memory = model.memories.get(selection.id);
    if (!memory) return [];
    return [
      { label: memory.sensitive ? gettext("Unmark sensitive") : gettext("Mark sensitive"),
        run: () => this.toggleSensitive(memory) },
      { label: memory.status === "archived" ? gettext("Restore") : gettext("Archive"),
        run: () => this.toggleArchive(memory) },
      { label: gettext("Link to…"), run: () => this.startLink(memory.id) },
      ...(isAtRisk(memory) ? [
        { label: gettext("Still valid"), run: () => this.stillValid(memory) },
        { label: gettext("Superseded by…"), run: () => this.startLink(memory.id, { relation: "supersedes" }) },
      ] : []),
    ];
  }

  edge(edge) {
    const relation = h("select", { id: "curate-relation", "aria-label": gettext("Relation") },
      CURATED_RELATIONS.map((r) => h("option", { value: r, selected: r === edge.relation }, this.labels.relation(r))));
    const decided = edge.status !== "inferred";
    return h("div", { class: "curate", id: "edge-curation" },
      h("button", { type: "button", class: "btn btn-small primary", id: "edge-approve", disabled: edge.status === "approved",
        onclick: () => this.approve(edge) }, gettext("Approve")),
      h("button", { type: "button", class: "btn btn-small", id: "edge-reject", disabled: edge.status === "rejected",
        onclick: () => this.reject(edge) }, gettext("Reject")),
      h("span", { class: "relabel" }, relation,
        h("button", { type: "button", class: "btn btn-small", id: "edge-relabel",
          onclick: () => relation.value !== edge.relation && this.act(this.client.edge(edge.id, { relation: relation.value }),
            interpolate(gettext("Relabelled as %s."), [this.labels.relation(relation.value)])) },
        gettext("Relabel"))),
      h("button", { type: "button", class: "btn btn-small danger", id: "edge-delete",
        onclick: () => this.remove(edge) }, gettext("Delete")),
      decided ? h("p", { class: "muted small" }, gettext("A person decided this edge: the engine will not change it.")) : null);
  }

  memory(memory) {
    const kind = h("select", { id: "curate-kind", "aria-label": gettext("Kind") },
      MEMORY_KINDS.map((k) => h("option", { value: k, selected: k === memory.kind }, this.labels.kind(k))));
    const reason = h("input", { type: "text", id: "curate-reason", maxlength: "500",
      placeholder: gettext("Reason (optional, kept in the curation log)") });
    const archived = memory.status === "archived";
    return h("div", { class: "curate", id: "memory-curation" },
      reason,
      h("div", { class: "curate-row" },
        h("button", { type: "button", class: "btn btn-small", id: "memory-sensitive",
          onclick: () => this.toggleSensitive(memory, reason.value) },
        memory.sensitive ? gettext("Unmark sensitive") : gettext("Mark sensitive")),
        h("button", { type: "button", class: "btn btn-small", id: "memory-archive",
          onclick: () => this.toggleArchive(memory, reason.value) },
        archived ? gettext("Restore") : gettext("Archive")),
        h("span", { class: "relabel" }, kind,
          h("button", { type: "button", class: "btn btn-small", id: "memory-kind",
            onclick: () => kind.value !== memory.kind && this.act(this.client.memory(memory.id, { kind: kind.value, reason: reason.value }),
              interpolate(gettext("Kind corrected to %s."), [this.labels.kind(kind.value)])) },
          gettext("Correct kind"))),
        h("button", { type: "button", class: "btn btn-small", id: "memory-link", onclick: () => this.startLink(memory.id) },
          gettext("Link to…")),
        memory.sensitive ? this._repeats(memory, reason) : null));
  }

  /** Rename one of the memory's entities, or merge it into another entity of the graph. */
  entities(memory, { model }) {
    const byName = new Map(model.entities.map((e) => [e.name, e]));
    const own = memory.entities.map((name) => byName.get(name)).filter(Boolean);
    if (!own.length) return null;
    const pick = h("select", { id: "entity-pick", "aria-label": gettext("Entity") },
      own.map((e) => h("option", { value: e.id }, e.name)));
    const name = h("input", { type: "text", id: "entity-name", maxlength: "300", placeholder: gettext("New name") });
    const into = h("select", { id: "entity-into", "aria-label": gettext("Merge into") },
      h("option", { value: "" }, gettext("Merge into…")),
      model.entities.filter((e) => !own.some((o) => o.id === e.id) || own.length > 1)
        .map((e) => h("option", { value: e.id }, e.name)));
    const chosen = () => model.entities.find((e) => String(e.id) === pick.value);
    const rename = async () => {
      const entity = chosen();
      if (!entity || !name.value.trim()) return;
      await this.act(this.client.renameEntity(entity.id, name.value.trim()),
        interpolate(gettext("Renamed to %s."), [name.value.trim()]));  // the live change renames it in the page
    };
    const merge = async () => {
      const entity = chosen();
      const survivor = model.entities.find((e) => String(e.id) === into.value);
      if (!entity || !survivor || survivor.id === entity.id) return;
      await this.act(this.client.mergeEntity(survivor.id, entity.id),
        interpolate(gettext("%(from)s merged into %(into)s."), { from: entity.name, into: survivor.name }, true));
    };
    const alias = h("select", { id: "entity-alias", "aria-label": gettext("Alias") });
    const fillAliases = () => {
      const entity = chosen();
      clear(alias).append(h("option", { value: "" }, gettext("Split an alias off…")),
        ...((entity && entity.aliases) || []).map((a) => h("option", { value: a }, a)));
      alias.disabled = !(entity && entity.aliases && entity.aliases.length);
      splitButton.disabled = alias.disabled;
    };
    const split = async () => {
      const entity = chosen();
      if (!entity || !alias.value) return;
      await this.act(this.client.splitEntity(entity.id, alias.value),
        interpolate(gettext("%s is its own entity now."), [alias.value]));
    };
    const splitButton = h("button", { type: "button", class: "btn btn-small", id: "entity-split", onclick: split },
      gettext("Split off"));
    pick.addEventListener("change", fillAliases);
    fillAliases();
    return h("div", { class: "curate entity-curation", id: "entity-curation" },
      h("div", { class: "curate-row" }, pick, name,
        h("button", { type: "button", class: "btn btn-small", id: "entity-rename", onclick: rename }, gettext("Rename"))),
      h("div", { class: "curate-row" }, into,
        h("button", { type: "button", class: "btn btn-small", id: "entity-merge", onclick: merge }, gettext("Merge"))),
      h("div", { class: "curate-row" }, alias, splitButton));
  }

  /** Under a sensitive memory: the other memories repeating its values, with one button to mark them too. */
  _repeats(memory, reason) {
    const box = h("div", { class: "repeats small", id: "memory-repeats" });
    this.client.repeats(memory.id).then((rows) => {
      if (!rows.length) return;
      const values = [...new Set(rows.flatMap((r) => r.shared))].slice(0, 3).join(", ");
      box.append(
        h("p", null, interpolate(ngettext("%(n)s other memory repeats %(values)s.", "%(n)s other memories repeat %(values)s.",
          rows.length), { n: rows.length, values }, true)),
        h("ul", { class: "repeat-list" }, rows.slice(0, 5).map((r) => h("li", null, `#${r.id} ${r.label}`))),
        h("button", { type: "button", class: "btn btn-small", id: "repeats-mark", onclick: async () => {
          let marked = 0;
          for (const row of rows) {
            try {
              await this.client.memory(row.id, { sensitive: true, reason: reason.value || interpolate(gettext("repeats #%s"), [memory.id]) });
              marked += 1;
            } catch { /* reported below: the count says how many were marked */ }
          }
          this.toast.show(interpolate(ngettext("%s memory marked sensitive.", "%s memories marked sensitive.", marked), [marked]));
        } }, gettext("Mark them sensitive too")));
    }).catch(() => {});
    return box;
  }

  promote(interaction) {
    return h("button", { type: "button", class: "btn btn-small", dataset: { promote: interaction.id },
      onclick: (event) => {
        event.stopPropagation();
        this.act(this.client.promote(interaction.id), gettext("Kept as a memory."));
      } }, gettext("Keep as memory"));
  }
}
