// Filter and search state shared by the graph, the memory list and the interaction list, and the
// sidebar controls that edit it. A memory is shown when it passes every filter; an edge when both
// ends are shown and it passes the edge filters. Search never hides: it marks matches.

import { clear, h } from "./dom.js";
import { formatDateTime, gettext, interpolate, ngettext } from "./i18n.js";
import { kindGlyph, relationGlyph } from "./graph/glyphs.js";
import { isKnownOrigin } from "./model.js";

const SLIDER_MAX = 1000;

export class Filters {
  constructor(config, model) {
    this.config = config;
    this.model = model;
    this.kinds = new Set(config.choices.kinds.map((c) => c.value));
    this.statuses = new Set(config.choices.statuses.map((c) => c.value));
    this.relations = new Set(config.choices.relations.map((c) => c.value));
    this.origins = new Set(config.choices.origins.map((c) => c.value));
    this.edgeStatuses = new Set(["inferred", "approved"]);
    this.proposalsOnly = false;
    this.entity = "";
    this.intent = "";
    this.from = null;
    this.to = null;
    this.search = "";
    this.listeners = [];
  }

  onChange(listener) {
    this.listeners.push(listener);
  }

  changed(what = "filters") {
    for (const listener of this.listeners) listener(what);
  }

  memoryVisible(memory) {
    if (!this.kinds.has(memory.kind) && this._known("kinds", memory.kind)) return false;
    if (!this.statuses.has(memory.status) && this._known("statuses", memory.status)) return false;
    if (this.entity && !memory.entities.some((name) => name.toLowerCase() === this.entity)) return false;
    if (this.intent && memory.intent !== this.intent) return false;
    if (this.from !== null && memory.time && memory.time < this.from) return false;
    if (this.to !== null && memory.time && memory.time > this.to) return false;
    return true;
  }

  /** Values the controls do not list (a new kind from a newer server) are never hidden. */
  _known(group, value) {
    return this.config.choices[group].some((c) => c.value === value);
  }

  /** An edge shows when both its ends do; a ghost end (another session's memory) is no memory of this session:
   *  the filters leave it be, and it shows with the edges that reach it. */
  edgeVisible(edge, visibleMemoryIds) {
    const shown = (id) => visibleMemoryIds.has(id) || (this.model && this.model.ghosts && this.model.ghosts.has(id));
    if (!shown(edge.source) || !shown(edge.target)) return false;
    if (!visibleMemoryIds.has(edge.source) && !visibleMemoryIds.has(edge.target)) return false;
    if (!this.relations.has(edge.relation) && this._known("relations", edge.relation)) return false;
    if (!this.origins.has(edge.origin) && this._known("origins", edge.origin)) return false;
    if (!this.edgeStatuses.has(edge.status)) return false;
    if (this.proposalsOnly && !edge.needsReview) return false;
    return true;
  }

  interactionVisible(interaction) {
    if (this.from !== null && interaction.time && interaction.time < this.from) return false;
    if (this.to !== null && interaction.time && interaction.time > this.to) return false;
    return true;
  }

  searchActive() {
    return this.search.length > 0;
  }

  matches(memory, canSeeSensitive) {
    if (!this.search) return false;
    const needle = this.search;
    const hidden = memory.sensitive && !canSeeSensitive;
    if (!hidden && memory.content.toLowerCase().includes(needle)) return true;
    if (`#${memory.id}` === needle || String(memory.id) === needle) return true;
    return memory.entities.some((name) => name.toLowerCase().includes(needle));
  }

  interactionMatches(interaction) {
    if (!this.search) return false;
    return interaction.content.toLowerCase().includes(this.search) || interaction.reason.toLowerCase().includes(this.search);
  }

  reset() {
    const fresh = new Filters(this.config, this.model);
    for (const key of ["kinds", "statuses", "relations", "origins", "edgeStatuses", "proposalsOnly", "entity",
      "intent", "from", "to"]) this[key] = fresh[key];
  }
}

/** The sidebar: builds the controls and keeps them in sync with a Filters object. */
export class FilterPanel {
  constructor(root, filters, model) {
    this.root = root;
    this.filters = filters;
    this.model = model;
    this.render();
    model.subscribe(() => this.refreshCounts());
  }

  render() {
    const f = this.filters;
    const choices = f.config.choices;
    clear(this.root);
    this.root.append(
      this._search(),
      this._checks(gettext("Kind"), "kinds", choices.kinds, kindGlyph),
      this._checks(gettext("Status"), "statuses", choices.statuses, null),
      this._checks(gettext("Relation"), "relations", choices.relations, relationGlyph),
      this._origins(choices.origins),
      this._edgeStatus(),
      this._selects(),
      this._timeRange(),
      h("button", { type: "button", class: "btn btn-small", id: "filters-reset", onclick: () => {
        f.reset();
        this.render();
        f.changed();
      } }, gettext("Reset filters")),
    );
    this.refreshCounts();
  }

  _search() {
    const input = h("input", {
      type: "search", id: "graph-search", class: "input", value: this.filters.search,
      placeholder: gettext("Search memories, entities, #id…"), autocomplete: "off",
      "aria-label": gettext("Search"),
    });
    let timer = null;
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        this.filters.search = input.value.trim().toLowerCase();
        this.filters.changed("search");
      }, 120);
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        clearTimeout(timer);
        this.filters.search = input.value.trim().toLowerCase();
        this.filters.changed("search-next");
      }
    });
    this.matchCount = h("span", { class: "muted small", id: "search-count" });
    return h("section", { class: "filter-group" }, input, this.matchCount);
  }

  /** A group of checkboxes; `glyphOf(value)` draws each option as the graph shows it (the legend). */
  _checks(title, key, options, glyphOf) {
    const set = this.filters[key];
    const items = options.map((option) => {
      const box = h("input", { type: "checkbox", value: option.value, checked: set.has(option.value),
        dataset: { filter: key } });
      box.addEventListener("change", () => {
        if (box.checked) set.add(option.value);
        else set.delete(option.value);
        this.filters.changed();
      });
      const mark = glyphOf ? glyphOf(option.value) : null;
      const count = h("span", { class: "count", dataset: { countFor: `${key}:${option.value}` } });
      return h("label", { class: "check" }, box, mark, h("span", { class: "check-label" }, option.label), count);
    });
    const only = (value) => {
      set.clear();
      if (value) set.add(value);
      this.render();
      this.filters.changed();
    };
    const all = h("button", { type: "button", class: "link small", onclick: () => {
      options.forEach((o) => set.add(o.value));
      this.render();
      this.filters.changed();
    } }, gettext("all"));
    const none = h("button", { type: "button", class: "link small", onclick: () => only(null) }, gettext("none"));
    return h("details", { class: "filter-group", open: true, dataset: { group: key } },
      h("summary", null, title, h("span", { class: "group-tools" }, all, " · ", none)), items);
  }

  /** Where edges came from, in two groups: known (the agent declared it, it was learned from use, a person drew
   *  it: drawn solid) and guessed (a rule's, an LLM's: dashed until decided). Each group's own box shows or hides
   *  all of it; each origin has its box too. */
  _origins(options) {
    const set = this.filters.origins;
    const groups = [
      { key: "known", title: gettext("Known"), hint: gettext("Declared by the agent, learned from use, or drawn by a person: solid lines."),
        options: options.filter((o) => isKnownOrigin(o.value)), swatch: "swatch-solid" },
      { key: "guessed", title: gettext("Guessed"), hint: gettext("Inferred by the engine's rules or an LLM: dashed until a person decides."),
        options: options.filter((o) => !isKnownOrigin(o.value)), swatch: "swatch-dashed" },
    ];
    const sections = groups.map((group) => {
      const values = group.options.map((o) => o.value);
      const whole = h("input", { type: "checkbox", dataset: { originClass: group.key } });
      const sync = () => {
        const on = values.filter((v) => set.has(v)).length;
        whole.checked = on === values.length;
        whole.indeterminate = on > 0 && on < values.length;
      };
      whole.addEventListener("change", () => {
        for (const value of values) {
          if (whole.checked) set.add(value);
          else set.delete(value);
        }
        this.render();
        this.filters.changed();
      });
      sync();
      const items = group.options.map((option) => {
        const box = h("input", { type: "checkbox", value: option.value, checked: set.has(option.value),
          dataset: { filter: "origins" } });
        box.addEventListener("change", () => {
          if (box.checked) set.add(option.value);
          else set.delete(option.value);
          sync();
          this.filters.changed();
        });
        return h("label", { class: "check check-sub" }, box, h("span", { class: `swatch ${group.swatch}` }),
          h("span", { class: "check-label" }, option.label),
          h("span", { class: "count", dataset: { countFor: `origins:${option.value}` } }));
      });
      return [h("label", { class: "check check-group", title: group.hint }, whole,
        h("span", { class: "check-label" }, group.title),
        h("span", { class: "count", dataset: { countFor: `originClass:${group.key}` } })), items];
    });
    const all = h("button", { type: "button", class: "link small", onclick: () => {
      options.forEach((o) => set.add(o.value));
      this.render();
      this.filters.changed();
    } }, gettext("all"));
    const none = h("button", { type: "button", class: "link small", onclick: () => {
      set.clear();
      this.render();
      this.filters.changed();
    } }, gettext("none"));
    return h("details", { class: "filter-group", open: true, dataset: { group: "origins" } },
      h("summary", null, gettext("Edge origin"), h("span", { class: "group-tools" }, all, " · ", none)), sections);
  }

  _edgeStatus() {
    const f = this.filters;
    const option = (value, label, extra = null) => {
      const box = h("input", { type: "checkbox", value, checked: f.edgeStatuses.has(value), dataset: { filter: "edgeStatuses" } });
      box.addEventListener("change", () => {
        if (box.checked) f.edgeStatuses.add(value);
        else f.edgeStatuses.delete(value);
        f.changed();
      });
      return h("label", { class: "check" }, box, extra, h("span", { class: "check-label" }, label));
    };
    const proposals = h("input", { type: "checkbox", id: "proposals-only", checked: f.proposalsOnly });
    proposals.addEventListener("change", () => {
      f.proposalsOnly = proposals.checked;
      f.changed();
    });
    return h("details", { class: "filter-group", open: true },
      h("summary", null, gettext("Edge status")),
      option("inferred", gettext("inferred")),
      option("approved", gettext("approved")),
      option("rejected", gettext("rejected"), h("span", { class: "swatch swatch-dotted" })),
      h("label", { class: "check" }, proposals, h("span", { class: "swatch swatch-line swatch-proposal" }),
        h("span", { class: "check-label" }, gettext("proposals only (needs review)"))));
  }

  _selects() {
    const f = this.filters;
    const entityNames = new Map();
    for (const entity of this.model.entities) entityNames.set(entity.name.toLowerCase(), entity.name);
    for (const memory of this.model.memories.values()) {
      for (const name of memory.entities) if (!entityNames.has(name.toLowerCase())) entityNames.set(name.toLowerCase(), name);
    }
    const entity = h("select", { id: "filter-entity", class: "input" },
      h("option", { value: "" }, gettext("any entity")),
      [...entityNames.entries()].sort((a, b) => a[1].localeCompare(b[1]))
        .map(([key, name]) => h("option", { value: key, selected: key === f.entity }, name)));
    entity.addEventListener("change", () => {
      f.entity = entity.value;
      f.changed();
    });
    const intents = [...new Set([...this.model.memories.values()].map((m) => m.intent).filter(Boolean))].sort();
    const labels = new Map((f.config.choices.intents || []).map((c) => [c.value, c.label]));
    const intent = h("select", { id: "filter-intent", class: "input" },
      h("option", { value: "" }, gettext("any intent")),
      intents.map((value) => h("option", { value, selected: value === f.intent }, labels.get(value) || value)));
    intent.addEventListener("change", () => {
      f.intent = intent.value;
      f.changed();
    });
    return h("details", { class: "filter-group", open: true },
      h("summary", null, gettext("Entity and intent")), entity, intent);
  }

  _timeRange() {
    const f = this.filters;
    const { min, max } = this.model.timeRange();
    const span = Math.max(1, max - min);
    const toValue = (time, fallback) => (time === null ? fallback : Math.round(((time - min) / span) * SLIDER_MAX));
    const fromInput = h("input", { type: "range", min: 0, max: SLIDER_MAX, value: toValue(f.from, 0), id: "time-from",
      class: "range", "aria-label": gettext("From") });
    const toInput = h("input", { type: "range", min: 0, max: SLIDER_MAX, value: toValue(f.to, SLIDER_MAX), id: "time-to",
      class: "range", "aria-label": gettext("To") });
    const label = h("div", { class: "muted small", id: "time-label" });
    const update = (notify) => {
      let a = Number(fromInput.value);
      let b = Number(toInput.value);
      if (a > b) [a, b] = [b, a];
      f.from = a <= 0 ? null : min + (a / SLIDER_MAX) * span;
      f.to = b >= SLIDER_MAX ? null : min + (b / SLIDER_MAX) * span;
      label.textContent = interpolate(gettext("%(from)s → %(to)s"), {
        from: formatDateTime(new Date(f.from ?? min).toISOString()),
        to: formatDateTime(new Date(f.to ?? max).toISOString()),
      }, true);
      if (notify) f.changed();
    };
    fromInput.addEventListener("input", () => update(true));
    toInput.addEventListener("input", () => update(true));
    update(false);
    if (!min) label.textContent = gettext("No memories yet.");
    return h("details", { class: "filter-group", open: true },
      h("summary", null, gettext("Time range")), h("div", { class: "range-pair" }, fromInput, toInput), label);
  }

  /** Per-value totals next to each checkbox (of all memories/edges, not only the visible ones). */
  refreshCounts() {
    const counts = new Map();
    const bump = (key) => counts.set(key, (counts.get(key) || 0) + 1);
    for (const memory of this.model.memories.values()) {
      bump(`kinds:${memory.kind}`);
      bump(`statuses:${memory.status}`);
    }
    for (const edge of this.model.edges.values()) {
      bump(`relations:${edge.relation}`);
      bump(`origins:${edge.origin}`);
      bump(`originClass:${isKnownOrigin(edge.origin) ? "known" : "guessed"}`);
    }
    for (const element of this.root.querySelectorAll("[data-count-for]")) {
      element.textContent = String(counts.get(element.dataset.countFor) || 0);
    }
  }

  showMatches(count) {
    if (!this.matchCount) return;
    this.matchCount.textContent = this.filters.searchActive()
      ? interpolate(ngettext("%s match", "%s matches", count), [count]) : "";
  }
}
