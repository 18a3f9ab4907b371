// The side panel: everything about the selected memory or edge, with its provenance and history.

import { fetchHistory, fetchInteraction, fetchRecalls, fetchRisks } from "./api.js";
import { clear, h, shorten } from "./dom.js";
import { formatDateTime, formatNumber, gettext, interpolate, ngettext } from "./i18n.js";
import { kindColor, relationColor, textOn } from "./graph/style.js";
import { sessionName } from "./graph/view.js";
import { isAtRisk, isKnownOrigin } from "./model.js";
import { riskItem } from "./risks.js";

const DIMENSION_LISTS = ["topics", "keywords", "dates", "times", "amounts", "numbers", "urls", "paths", "identifiers"];

/** What an edge's origin means, in a sentence (the edge panel, under its origin). */
export function originNote(edge) {
  const notes = {
    agent: gettext("The agent declared this link when it sent the interaction: known, not guessed."),
    use: gettext("Learned from use: after a recall returned the parent, the agent acted on it in the child."),
    human: gettext("A person drew this edge."),
    rule: gettext("Guessed by the engine's rules from the text."),
    llm: gettext("Guessed by a language model from the text."),
  };
  const note = notes[edge.origin] || "";
  if (isKnownOrigin(edge.origin) || edge.status === "rejected") return note;
  return `${note} ${edge.status === "approved" ? gettext("A person approved it.") : gettext("Drawn dashed until a person decides.")}`;
}

export class SidePanel {
  constructor(root, { config, model, labels, onSelect, onEntity, onRecall = null, curation = null, onRisks = null }) {
    Object.assign(this, { root, config, model, labels, onSelect, onEntity, onRecall, curation, onRisks });
    this.selection = null;
    model.subscribe((patch) => this.refresh(patch));
    this.interactionCache = new Map();
    this.showEmpty();
  }

  showEmpty() {
    this.selection = null;
    clear(this.root).append(
      h("div", { class: "panel-empty" },
        h("h2", null, gettext("Details")),
        h("p", { class: "muted" }, gettext("Click a memory or an edge to see its content, dimensions, scores, sources and history."))),
    );
  }

  show(selection) {
    if (this.onRisks) this.onRisks([]); // an at-risk memory's path is drawn again once its risks are read
    if (!selection) return this.showEmpty();
    this.selection = selection;
    if (selection.type === "memory") return this._memory(selection.id);
    if (selection.type === "ghost") return this._ghost(selection.id);
    return this._edge(selection.id);
  }

  /** Where a ghost lives: its session's page with it selected (`?memory=<id>`). */
  ghostUrl(memoryId) {
    const ghost = this.model.ghosts.get(memoryId);
    const session = ghost ? ghost.sessionId : 0;
    return `${this.config.urls.session.replace(/\/sessions\/0\/$/, `/sessions/${session}/`)}?memory=${memoryId}`;
  }

  /** A memory's text as this reader may see it, or what stands in for it. */
  _text(memory, length) {
    const hidden = memory.sensitive && (!this.config.canSeeSensitive || memory.content === "[sensitive]");
    return shorten(hidden ? gettext("sensitive") : memory.content, length);
  }

  /** The button that selects an edge's end: a memory of this session, or a ghost (another session's, named). */
  _endLink(memoryId, length) {
    const ghost = this.model.ghosts.get(memoryId);
    const memory = this.model.memories.get(memoryId);
    const text = memory || ghost ? this._text(memory || ghost, length) : "";
    return h("button", { type: "button", class: `link memory-link${ghost ? " ghost-link" : ""}`,
      onclick: () => this.onSelect({ type: ghost ? "ghost" : "memory", id: memoryId }) },
    `#${memoryId} `, h("span", { class: "muted" }, text),
    ghost ? h("span", { class: "chip chip-elsewhere small" }, sessionName(ghost)) : null);
  }

  /** Another session's memory drawn here because an edge joins it to one of this session's. */
  _ghost(id) {
    const ghost = this.model.ghosts.get(id);
    if (!ghost) {
      clear(this.root).append(h("p", { class: "muted" }, gettext("This memory is no longer in the graph.")));
      return;
    }
    const hidden = ghost.sensitive && (!this.config.canSeeSensitive || ghost.content === "[sensitive]");
    const chips = [
      h("span", { class: "chip", style: { background: kindColor(ghost.kind), color: textOn(kindColor(ghost.kind)) } }, this.labels.kind(ghost.kind)),
      h("span", { class: `chip chip-status-${ghost.status}` }, this.labels.status(ghost.status)),
      h("span", { class: "chip chip-elsewhere" }, gettext("another session")),
      ghost.sensitive ? h("span", { class: "chip chip-sensitive" }, gettext("sensitive")) : null,
    ];
    const where = sessionName(ghost);
    clear(this.root).append(
      h("article", { class: "panel-body", dataset: { ghostId: ghost.id } },
        this._header(chips, interpolate(gettext("Memory #%s"), [ghost.id]), gettext("Close")),
        h("p", { class: "ghost-home", id: "ghost-home" },
          interpolate(gettext("It belongs to the session “%(title)s” (#%(session)s), not to this one: it is shown here because an edge joins it to a memory of this session."),
            { title: where, session: ghost.sessionId }, true)),
        h("p", null, h("a", { href: this.ghostUrl(ghost.id), id: "ghost-open", class: "btn btn-small" },
          gettext("Open it in its session"))),
        hidden ? h("p", { class: "content masked" }, gettext("The content of this memory is sensitive and hidden from you."))
          : h("p", { class: "content", id: "panel-content" }, ghost.content),
        ghost.occurredAt ? h("p", { class: "muted small" }, formatDateTime(ghost.occurredAt)) : null,
        this._section(gettext("Links"), this._links(ghost))));
  }

  /** Re-render when a live change touched what is shown. */
  refresh(patch) {
    // A memory marked or unmarked sensitive masks or frees its source interactions too: read them again.
    for (const memory of patch.memories.updated) {
      for (const source of memory.sources || []) this.interactionCache.delete(source.interaction_id ?? source.id);
    }
    const s = this.selection;
    if (!s) return;
    const ghosts = patch.ghosts || { added: [], updated: [], removed: [] };
    const ids = s.type === "memory"
      ? [...patch.memories.added, ...patch.memories.updated].map((m) => m.id).concat(patch.memories.removed)
      : s.type === "ghost" ? [...ghosts.added, ...ghosts.updated].map((g) => g.id).concat(ghosts.removed)
        : [...patch.edges.added, ...patch.edges.updated].map((e) => e.id).concat(patch.edges.removed);
    const touchesEdges = s.type !== "edge"
      && [...patch.edges.added, ...patch.edges.updated].some((e) => e.source === s.id || e.target === s.id);
    if (ids.includes(s.id) || touchesEdges) this.show(s);
  }

  _header(chips, title, closeLabel) {
    return h("div", { class: "panel-header" },
      h("div", { class: "chips" }, chips),
      h("button", { type: "button", class: "icon-btn", title: closeLabel, "aria-label": closeLabel,
        onclick: () => this.onSelect(null) }, "×"),
      h("h2", { class: "panel-title" }, title));
  }

  _memory(id) {
    const memory = this.model.memories.get(id);
    if (!memory) {
      clear(this.root).append(h("p", { class: "muted" }, gettext("This memory is no longer in the graph.")));
      return;
    }
    const hidden = memory.sensitive && (!this.config.canSeeSensitive || memory.content === "[sensitive]");
    const chips = [
      h("span", { class: "chip", style: { background: kindColor(memory.kind), color: textOn(kindColor(memory.kind)) } }, this.labels.kind(memory.kind)),
      h("span", { class: `chip chip-status-${memory.status}` }, this.labels.status(memory.status)),
      memory.sensitive ? h("span", { class: "chip chip-sensitive" }, gettext("sensitive")) : null,
      isAtRisk(memory) ? h("span", { class: "chip chip-at-risk" }, `⚠ ${gettext("may be out of date")}`) : null,
    ];
    const content = hidden
      ? h("p", { class: "content masked" }, gettext("The content of this memory is sensitive and hidden from you."))
      : h("p", { class: "content", id: "panel-content" }, memory.content);
    const history = h("div", { class: "history" }, h("p", { class: "muted small" }, gettext("Loading…")));
    const recalls = h("div", { class: "panel-recalls", id: "panel-recalls" });
    const sources = h("div", { class: "sources" });
    clear(this.root).append(
      h("article", { class: "panel-body", dataset: { memoryId: memory.id } },
        this._header(chips, interpolate(gettext("Memory #%s"), [memory.id]), gettext("Close")),
        this._replacedBy(memory),
        this._atRisk(memory),
        content,
        h("p", { class: "muted small" }, formatDateTime(memory.occurredAt)),
        this.curation ? this._section(gettext("Curate"), this.curation.memory(memory)) : null,
        this._section(gettext("Scores"), this._scores(memory)),
        this._section(gettext("Entities"), this._entities(memory),
          this.curation ? this.curation.entities(memory, { model: this.model }) : null),
        this._section(gettext("Dimensions"), this._dimensions(memory)),
        this._section(gettext("Source interactions"), sources),
        this._section(gettext("Links"), this._links(memory)),
        this._section(gettext("Recalls that returned it"), recalls),
        this._section(gettext("History"), history),
        h("p", { class: "small" }, h("a", { href: this._aroundUrl(memory.id), id: "panel-around" },
          gettext("Open only its neighbourhood")))));
    this._loadSources(memory, sources);
    this._loadRecalls(recalls, { memory: memory.id });
    this._loadHistory(history, { memory: memory.id }, (c) => (c.object_type === "memory" && c.object_id === memory.id)
      || (c.object_type === "edge" && c.after && (c.after.source_id === memory.id || c.after.target_id === memory.id)));
  }

  _edge(id) {
    const edge = this.model.edges.get(id);
    if (!edge) {
      clear(this.root).append(h("p", { class: "muted" }, gettext("This edge is no longer in the graph.")));
      return;
    }
    const end = (memoryId) => this._endLink(memoryId, 70);
    const crossing = [edge.source, edge.target].map((id) => this.model.ghosts.get(id)).find(Boolean);
    const known = isKnownOrigin(edge.origin);
    const chips = [
      h("span", { class: "chip", style: { background: relationColor(edge.relation), color: textOn(relationColor(edge.relation)) } }, this.labels.relation(edge.relation)),
      h("span", { class: `chip chip-edge-${edge.status}` }, this.labels.edgeStatus(edge.status)),
      h("span", { class: `chip chip-${known ? "known" : "guessed"}`, id: "panel-origin-class" },
        known ? gettext("known") : gettext("guessed")),
      edge.needsReview ? h("span", { class: "chip chip-proposal" }, gettext("needs review")) : null,
    ];
    const history = h("div", { class: "history" }, h("p", { class: "muted small" }, gettext("Loading…")));
    const recalls = h("div", { class: "panel-recalls", id: "panel-recalls" });
    clear(this.root).append(
      h("article", { class: "panel-body", dataset: { edgeId: edge.id } },
        this._header(chips, interpolate(gettext("Edge #%s"), [edge.id]), gettext("Close")),
        h("dl", { class: "facts" },
          h("dt", null, gettext("From (parent)")), h("dd", null, end(edge.source)),
          h("dt", null, gettext("To (child)")), h("dd", null, end(edge.target)),
          h("dt", null, gettext("Relation")), h("dd", { id: "panel-relation" }, this.labels.relation(edge.relation)),
          h("dt", null, gettext("Weight")), h("dd", null, formatNumber(edge.weight)),
          h("dt", null, gettext("Confidence")), h("dd", null, this._bar(edge.confidence, 1)),
          h("dt", null, gettext("Origin")), h("dd", { id: "panel-origin" },
            h("span", { class: "origin-label" }, this.labels.origin(edge.origin)),
            h("span", { class: "origin-note muted small" }, originNote(edge))),
          h("dt", null, gettext("Status")), h("dd", null, this.labels.edgeStatus(edge.status)),
          edge.createdAt ? [h("dt", null, gettext("Created")), h("dd", null, formatDateTime(edge.createdAt))] : null),
        crossing ? h("p", { class: "small ghost-home", id: "edge-crossing" },
          interpolate(gettext("This edge joins a memory of this session to one of the session “%s”."), [sessionName(crossing)])) : null,
        this.curation ? this._section(gettext("Curate"), this.curation.edge(edge)) : null,
        this._section(gettext("Rationale"), h("p", { class: "rationale" }, edge.rationale || gettext("No rationale recorded."))),
        this._section(gettext("Recalls it carried activation in"), recalls),
        this._section(gettext("History"), history)));
    this._loadRecalls(recalls, { edge: edge.id });
    this._loadHistory(history, { edge: edge.id }, (c) => c.object_type === "edge" && c.object_id === edge.id);
  }

  /** The newest stored recalls that returned this memory (or that this edge carried activation in). */
  async _loadRecalls(root, of) {
    let page;
    try {
      page = await fetchRecalls(this.config, { ...of, limit: 5 });
    } catch (error) {
      clear(root).append(h("p", { class: "muted small" }, error.message));
      return;
    }
    if (!page.count) {
      clear(root).append(h("p", { class: "muted small" }, of.edge ? gettext("No stored recall went through this edge.")
        : gettext("No stored recall returned this memory.")));
      return;
    }
    clear(root).append(
      h("p", { class: "small" }, interpolate(ngettext("%s stored recall", "%s stored recalls", page.count), [page.count])),
      h("ul", { class: "recall-links" }, page.results.map((recall) => h("li", null,
        h("button", { type: "button", class: "link", dataset: { recallId: recall.id },
          onclick: () => this.onRecall && this.onRecall(recall.id) },
        recall.query_hidden ? gettext("query hidden from you") : shorten(recall.query, 60)),
        h("span", { class: "muted small" }, ` #${recall.id} · ${formatDateTime(recall.created_at)}`)))));
  }

  _aroundUrl(memoryId) {
    const url = new URL(location.href);
    url.searchParams.set("around", String(memoryId));
    url.searchParams.set("hops", "2");
    url.searchParams.delete("limit");
    url.hash = "";
    return url.toString();
  }

  _section(title, body, extra = null) {
    return h("section", { class: "panel-section" }, h("h3", null, title), body, extra);
  }

  _bar(value, max) {
    const ratio = Math.max(0, Math.min(1, Number(value) / max));
    return h("span", { class: "bar-wrap" }, h("span", { class: "bar" }, h("span", { class: "bar-fill",
      style: { width: `${Math.round(ratio * 100)}%` } })), h("span", { class: "bar-value" }, formatNumber(value)));
  }

  _scores(memory) {
    const rows = [[gettext("Importance"), memory.importance], [gettext("Relevance"), memory.relevance],
      [gettext("Novelty"), memory.novelty]];
    return h("dl", { class: "facts" },
      rows.filter(([, v]) => v !== null && v !== undefined).map(([label, value]) => [h("dt", null, label),
        h("dd", null, this._bar(value, 5))]),
      memory.accessCount !== null ? [h("dt", null, gettext("Recalled")), h("dd", null, String(memory.accessCount))] : null);
  }

  _entities(memory) {
    if (!memory.entities.length) return h("p", { class: "muted small" }, gettext("None found."));
    const types = new Map((memory.dimensions.entities || []).map((e) => [e.name, e.type]));
    return h("div", { class: "chips" }, memory.entities.map((name) => h("button", {
      type: "button", class: "chip chip-entity", title: gettext("Show only memories mentioning this entity"),
      onclick: () => this.onEntity(name),
    }, name, types.get(name) ? h("span", { class: "muted" }, ` · ${this.labels.entityType(types.get(name))}`) : null)));
  }

  _dimensions(memory) {
    const d = memory.dimensions || {};
    const rows = [];
    const add = (label, value) => {
      if (value === null || value === undefined || value === "" || (Array.isArray(value) && !value.length)) return;
      rows.push(h("dt", null, label), h("dd", null, Array.isArray(value) ? value.join(", ") : String(value)));
    };
    add(gettext("Intent"), memory.intent ? this.labels.intent(memory.intent) : "");
    add(gettext("Language"), d.language);
    add(gettext("Sentiment"), d.sentiment ? this.labels.sentiment(d.sentiment) : "");
    for (const key of DIMENSION_LISTS) add(this.labels.dimension(key), d[key]);
    add(gettext("Valid until"), d.valid_until ? formatDateTime(d.valid_until) : "");
    add(gettext("Source kind"), d.source_kind ? this.labels.interactionKind(d.source_kind) : "");
    const attributes = (d.attributes || []).map((a) => `${a.entity}.${a.attribute} = ${a.value}`);
    add(gettext("Attributes"), attributes);
    return rows.length ? h("dl", { class: "facts" }, rows) : h("p", { class: "muted small" }, gettext("None found."));
  }

  _links(memory) {
    const edges = this.model.edgesOf(memory.id);
    if (!edges.length) return h("p", { class: "muted small" }, gettext("No links."));
    return h("ul", { class: "links" }, edges.map((edge) => {
      const outgoing = edge.source === memory.id;
      const otherId = outgoing ? edge.target : edge.source;
      return h("li", null,
        h("button", { type: "button", class: "link", onclick: () => this.onSelect({ type: "edge", id: edge.id }) },
          h("span", { class: "rel", style: { color: relationColor(edge.relation) } },
            `${outgoing ? "→" : "←"} ${this.labels.relation(edge.relation)}`)),
        " ",
        this.model.holds(otherId) ? this._endLink(otherId, 48) : h("span", { class: "muted" }, `#${otherId}`),
        isKnownOrigin(edge.origin) ? h("span", { class: "chip chip-known small", title: this.labels.origin(edge.origin) },
          this.labels.origin(edge.origin)) : null,
        edge.needsReview ? h("span", { class: "chip chip-proposal small" }, gettext("needs review")) : null);
    }));
  }

  /** An at-risk memory: what it depends on changed, how, through which edges (read from the server), and for
   *  curators what settles it. The edges on the way to what changed are drawn on the graph meanwhile. */
  _atRisk(memory) {
    if (!isAtRisk(memory)) return null;
    const why = h("ul", { class: "risk-list", id: "panel-risks" }, h("li", { class: "muted small" }, gettext("Loading…")));
    const selection = this.selection;
    fetchRisks(this.config, memory.id).then((rows) => {
      if (this.selection !== selection || !why.isConnected) return; // another selection, or drawn again since
      clear(why).append(...(rows.length ? rows.map((row) => riskItem(row, {
        labels: this.labels, memoryLink: (id, label) => this._riskLink(id, label),
        originOf: (edgeIdValue) => (this.model.edges.get(edgeIdValue) || {}).origin || null,
      })) : [h("li", { class: "muted small" }, gettext("The change it depended on is no longer recorded."))]));
      if (this.onRisks) this.onRisks(rows);
    }).catch((error) => {
      if (this.selection === selection && why.isConnected) clear(why).append(h("li", { class: "muted small" }, error.message));
    });
    return h("section", { class: "at-risk", id: "panel-at-risk" },
      h("h3", null, `⚠ ${gettext("May be out of date")}`),
      h("p", { class: "small at-risk-lead" }, gettext("Something this memory depends on has changed since it was stored.")),
      why,
      this.curation ? this.curation.riskActions(memory) : null);
  }

  /** A memory a risk names: selectable when the page holds it (here or as a ghost), else its text only. */
  _riskLink(memoryId, label) {
    const held = this.model.memories.has(memoryId) || this.model.ghosts.has(memoryId);
    const text = [`#${memoryId} `, h("span", { class: "risk-label" }, `“${shorten(label, 80)}”`)];
    if (!held) return h("span", { class: "risk-memory" }, text);
    const ghost = this.model.ghosts.has(memoryId);
    // A link, not a button: it flows with the sentence ("Depends on: #12 “…” — superseded: …") instead of boxing it.
    return h("a", { href: ghost ? this.ghostUrl(memoryId) : `?memory=${memoryId}`, class: "risk-memory", dataset: { memoryId },
      onclick: (event) => {
        event.preventDefault();
        this.onSelect({ type: ghost ? "ghost" : "memory", id: memoryId });
      } }, text);
  }

  /** What replaces this memory or is proposed to, and what it replaces (supersedes edges, not rejected), when
   *  the other memory lives in another session: said first, with the edge to approve, reject or undo. */
  _replacedBy(memory) {
    const edges = this.model.edgesOf(memory.id).filter((e) => e.relation === "supersedes" && e.status !== "rejected"
      && this.model.ghosts.has(e.source === memory.id ? e.target : e.source));
    if (!edges.length) return null;
    return h("div", { class: "replaced-by", id: "panel-replaced-by" }, edges.map((edge) => {
      const replaced = edge.source === memory.id;
      const other = replaced ? edge.target : edge.source;
      const text = replaced ? (edge.needsReview ? gettext("Proposed replacement:") : gettext("Replaced by:"))
        : (edge.needsReview ? gettext("Proposed to replace:") : gettext("Replaces:"));
      return h("p", { class: "small" }, h("strong", null, text), " ", this._endLink(other, 60), " ",
        h("button", { type: "button", class: "link", dataset: { edgeId: edge.id },
          onclick: () => this.onSelect({ type: "edge", id: edge.id }) }, gettext("See the edge")));
    }));
  }

  _loadSources(memory, root) {
    const sources = memory.sources || [];
    if (!sources.length) {
      root.append(h("p", { class: "muted small" }, gettext("No source recorded.")));
      return;
    }
    for (const source of sources) {
      const id = source.interaction_id ?? source.id;
      const box = h("div", { class: "source", dataset: { interactionId: id } },
        h("div", { class: "small" }, h("strong", null, `#${id}`), " ", this.labels.interactionKind(source.kind),
          " · ", formatDateTime(source.occurred_at)));
      root.append(box);
      const cached = this.interactionCache.get(id) || fetchInteraction(this.config, id);
      this.interactionCache.set(id, cached);
      cached.then((row) => {
        const scores = row.scores || {};
        box.append(
          h("blockquote", { class: "raw" }, memory.sensitive && !this.config.canSeeSensitive ? gettext("sensitive") : row.content),
          h("div", { class: "small muted" }, interpolate(gettext("status %(status)s · relevance %(r)s · importance %(i)s · novelty %(n)s · total %(t)s"), {
            status: this.labels.interactionStatus(row.status), r: formatNumber(scores.relevance),
            i: formatNumber(scores.importance), n: formatNumber(scores.novelty), t: formatNumber(scores.total),
          }, true)),
          row.reason ? h("div", { class: "small" }, row.reason) : null);
      }).catch(() => box.append(h("p", { class: "muted small" }, gettext("Could not load this interaction."))));
    }
  }

  _loadHistory(root, of, predicate) {
    // The server sends this memory's (or edge's) history; what arrived live since is merged in by id.
    const selection = this.selection;
    fetchHistory(this.config, of).then(({ changes: loaded }) => {
      if (this.selection !== selection) return;
      const byId = new Map();
      for (const change of loaded) byId.set(change.id, change);
      for (const change of this.model.history) if (predicate(change)) byId.set(change.id, change);
      const rows = [...byId.values()].sort((a, b) => a.id - b.id);
      clear(root);
      if (!rows.length) {
        root.append(h("p", { class: "muted small" }, gettext("No changes recorded.")));
        return;
      }
      root.append(h("ol", { class: "timeline-list" }, rows.map((c) => h("li", null,
        h("span", { class: "op" }, c.op), " ", h("span", { class: "muted small" },
          interpolate(gettext("#%(id)s by %(actor)s, %(when)s"), { id: c.id, actor: c.actor, when: formatDateTime(c.created_at) }, true)),
        this._diff(c)))));
    }).catch(() => {
      clear(root).append(h("p", { class: "muted small" }, gettext("Could not load the history.")));
    });
  }

  _diff(change) {
    if (!change.before || !change.after) return null;
    const keys = Object.keys(change.after).filter((k) => JSON.stringify(change.before[k]) !== JSON.stringify(change.after[k]));
    if (!keys.length) return null;
    return h("div", { class: "diff small" }, keys.map((k) => h("div", null, h("code", null, k), ": ",
      h("del", null, shorten(JSON.stringify(change.before[k]), 40)), " → ",
      h("ins", null, shorten(JSON.stringify(change.after[k]), 40)))));
  }
}
