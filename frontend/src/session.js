// The session page: load the graph, draw it, wire filters, views and the side panel, then go live.

import { fetchGhosts, fetchGraph } from "./api.js";
import { ContextMenu } from "./context_menu.js";
import { FailedTable } from "./failed.js";
import { CurationClient, CurationControls, Toast } from "./curate.js";
import { $, clear, h } from "./dom.js";
import { Filters, FilterPanel } from "./filters.js";
import { nodeId, GraphView } from "./graph/view.js";
import { gettext, interpolate } from "./i18n.js";
import { makeLabels } from "./labels.js";
import { LiveConnection, socketUrl } from "./live.js";
import { GraphModel, isAtRisk } from "./model.js";
import { SidePanel } from "./panel.js";
import { RecallDrawer } from "./replay.js";
import { InteractionTable, MemoryTable } from "./table.js";

const TABS = ["graph", "list", "interactions", "failed"];

class SessionApp {
  constructor(config) {
    this.config = config;
    this.labels = makeLabels(config.choices);
    this.tab = "graph";
    this.visibleIds = new Set();
    this.matchIds = [];
    this.matchCursor = -1;
    this.ghostsAsked = new Set(); // far ends of live edges already asked for as ghosts
  }

  async start() {
    this._overlay(gettext("Loading the graph…"));
    const params = Object.fromEntries(["around", "hops", "limit"].map((k) => [k, new URLSearchParams(location.search).get(k)]));
    let graph;
    try {
      graph = await fetchGraph(this.config, params);
    } catch (error) {
      this._overlay(error.status === 403 ? gettext("You do not have access to this session.")
        : interpolate(gettext("Could not load the graph (%s)."), [error.message]), true);
      return;
    }
    performance.mark("cw-graph-fetched");
    this.model = new GraphModel(graph, this.config.interactions || []);
    this.filters = new Filters(this.config, this.model);
    this.view = new GraphView($("#cy"), this.model, {
      canSeeSensitive: this.config.canSeeSensitive, onSelect: (s) => this.select(s),
      kindLabel: (kind) => this.labels.kind(kind),
      onExpand: (id) => this.expand(id), onMenu: (selection, at) => this._menu(selection, at),
    });
    this.menu = new ContextMenu($("#view-graph"));
    performance.mark("cw-drawn");
    this.curation = this.config.canCurate ? new CurationControls({
      client: new CurationClient(this.config), toast: new Toast($("#toast")), labels: this.labels,
    }) : null;
    this.replay = new RecallDrawer($("#replay"), {
      config: this.config, view: this.view, labels: this.labels, onSelect: (s) => this.select(s, { center: true }),
      onClose: () => this.applyFilters(),
    });
    this.panel = new SidePanel($("#panel"), {
      config: this.config, model: this.model, labels: this.labels, curation: this.curation,
      onSelect: (s) => this.select(s, { center: true }), onEntity: (name) => this._filterEntity(name),
      onRecall: (id) => this._openRecall(id),
      onRisks: (risks) => (risks.length ? this.view.showRiskPath(risks) : this.view.clearRiskPath()),
    });
    this.filterPanel = new FilterPanel($("#filters"), this.filters, this.model);
    this.table = new MemoryTable($("#view-list"), {
      model: this.model, filters: this.filters, labels: this.labels,
      canSeeSensitive: this.config.canSeeSensitive, onSelect: (s) => this.select(s),
    });
    this.model.subscribe(() => this.tab === "list" && this.table.render(this.visibleIds));
    this.model.subscribe((patch) => patch.interactions.length && this.tab === "interactions"
      && this.interactionTable.render());
    this.interactionTable = new InteractionTable($("#view-interactions"), {
      model: this.model, filters: this.filters, labels: this.labels, curation: this.curation,
    });
    this.failedTable = new FailedTable($("#view-failed"), {
      config: this.config, filters: this.filters, labels: this.labels, curation: this.curation,
      onChange: () => this._failedChanged(),
    });
    this.model.subscribe((patch) => this.failedTable.track(patch) && this._failedChanged());
    this.filters.onChange((what) => this._filtersChanged(what));
    const ringed = this._offerRings();
    this._wireToolbar();
    this.applyFilters();
    if (this.model.truncated) this._truncatedNotice(graph);
    performance.mark("cw-filtered");
    if (this.view.large) {
      this.view.layouts.keepInitial();
      this.view.fitPositions();
      this.view.watchLabels();
    } else {
      await this.view.layout(ringed ? "rings" : "force");
    }
    performance.mark("cw-laid-out");
    this._overlay(null);
    this._setTab(TABS.includes(location.hash.slice(1)) ? location.hash.slice(1) : "graph");
    this._stats();
    await this._markReady();
    this.live = new LiveConnection({
      url: socketUrl(this.config.urls.ws), config: this.config, lastId: () => this.model.lastChangeId,
      onChanges: (changes) => this.onChanges(changes), onStatus: (state, detail) => this._liveStatus(state, detail),
    });
    this.live.connect();
    window.cw = { app: this, cy: this.view.cy, model: this.model, live: this.live, filters: this.filters };
    if (this.view.pendingEdges.length) {
      await this.view.fillEdges((edge) => this.filters.edgeVisible(edge, this.visibleIds));
      this._stats();
    }
    performance.mark("cw-complete");
    document.documentElement.dataset.graphComplete = "1";
    const recall = new URLSearchParams(location.search).get("recall");
    if (recall && /^\d+$/.test(recall)) await this._openRecall(Number(recall));
    this._selectFromUrl();
  }

  /** `?memory=<id>` (a ghost's "Open it in its session" link): that memory selected, its panel open. When only
   *  part of a large session is loaded and it is not among it, the page loads its neighbourhood instead. */
  _selectFromUrl() {
    const wanted = new URLSearchParams(location.search).get("memory");
    if (!wanted || !/^\d+$/.test(wanted)) return;
    const id = Number(wanted);
    if (this.model.memories.has(id)) {
      this.select({ type: "memory", id }, { center: true });
    } else if (this.model.truncated && this.model.around !== id) {
      const url = new URL(location.href);
      url.searchParams.set("around", String(id));
      location.replace(url);
    }
  }

  _markReady() {
    // Ready = drawn and answering: the first frame after the layout has been painted.
    return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => {
      performance.mark("cw-interactive");
      document.documentElement.dataset.graphReady = "1";
      resolve();
    })));
  }

  onChanges(changes) {
    const patch = this.model.apply(changes);
    if (!patch.changes.length) return;
    this._draw(patch);
    if (patch.edges.added.length || patch.edges.updated.length) this._fetchGhosts();
  }

  /** Edges that reach a memory of another session the page does not hold yet: read those memories as ghosts,
   *  then draw them with the edges (one request for all; a failed read leaves them for the next change or load). */
  async _fetchGhosts() {
    const missing = this.model.missingEnds().filter((id) => !this.ghostsAsked.has(id)).slice(0, 200);
    if (!missing.length) return;
    for (const id of missing) this.ghostsAsked.add(id);
    let rows;
    try {
      rows = (await fetchGhosts(this.config, missing)).ghosts;
    } catch {
      for (const id of missing) this.ghostsAsked.delete(id);
      return;
    }
    const patch = this.model.addGhosts(rows);
    if (patch.ghosts.added.length) this._draw(patch);
  }

  _draw(patch) {
    const structural = patch.memories.updated.length || patch.memories.removed.length || patch.edges.updated.length
      || patch.edges.removed.length || patch.ghosts.added.length || patch.ghosts.updated.length
      || patch.ghosts.removed.length;
    for (const memory of patch.memories.added) if (this.filters.memoryVisible(memory)) this.visibleIds.add(memory.id);
    const added = this.view.patch(patch, (element) => this._elementVisible(element));
    if (structural) this.applyFilters();
    else if (this.filters.searchActive()) this._highlight();
    this.model.notify(patch); // the side panel, the filter counts and the tables are subscribed
    if (this.replay.isOpen) this.replay.repaint();
    this._stats();
    if (added.nonempty()) document.dispatchEvent(new CustomEvent("cw:patched", { detail: { added: added.map((e) => e.id()) } }));
  }

  _elementVisible(element) {
    if (element.isNode() && element.data("gid")) return this._ghostShown(element.data("gid"));
    if (element.isNode()) return this.visibleIds.has(element.data("mid"));
    const edge = this.model.edges.get(element.data("eid"));
    return Boolean(edge) && this.filters.edgeVisible(edge, this.visibleIds);
  }

  applyFilters() {
    const visible = new Set();
    for (const memory of this.model.memories.values()) if (this.filters.memoryVisible(memory)) visible.add(memory.id);
    this.visibleIds = visible;
    const cy = this.view.cy;
    cy.batch(() => {
      cy.nodes().forEach((node) => {
        if (node.data("ghost")) return;
        const hide = !visible.has(node.data("mid"));
        if (node.hasClass("hidden") !== hide) node.toggleClass("hidden", hide);
      });
      cy.edges().forEach((element) => {
        if (element.data("ghost")) return;
        const edge = this.model.edges.get(element.data("eid"));
        const hide = !edge || !this.filters.edgeVisible(edge, visible);
        if (element.hasClass("hidden") !== hide) element.toggleClass("hidden", hide);
      });
      // A ghost (another session's memory) is no memory of this session: it shows while an edge to it does.
      cy.nodes("[?elsewhere]").forEach((node) => {
        const hide = !node.connectedEdges().some((e) => !e.hasClass("hidden"));
        if (node.hasClass("hidden") !== hide) node.toggleClass("hidden", hide);
      });
    });
    this._highlight();
    this.view.refitLabels(0); // what is shown (and matched) decides which labels have room
    this._stats();
    if (this.tab === "list") this.table.render(this.visibleIds);
    if (this.tab === "interactions") this.interactionTable.render();
    if (this.tab === "failed") this.failedTable.render();
  }

  /** A failed or retried interaction came live, or a retry answered: the tab's count, and its rows if shown. */
  _failedChanged() {
    this._failedCount();
    if (this.tab === "failed") this.failedTable.render();
  }

  _failedCount() {
    const count = this.failedTable.count;
    const badge = $("#failed-count");
    badge.textContent = String(count);
    badge.classList.toggle("alert", count > 0);
  }

  _ghostShown(ghostIdValue) {
    return this.model.edgesOf(ghostIdValue).some((edge) => this.filters.edgeVisible(edge, this.visibleIds));
  }

  _highlight() {
    const cy = this.view.cy;
    const active = this.filters.searchActive();
    const matches = [];
    cy.batch(() => {
      cy.nodes().forEach((node) => {
        const memory = this.model.memories.get(node.data("mid"));
        const match = active && memory && this.visibleIds.has(memory.id) && this.filters.matches(memory, this.config.canSeeSensitive);
        if (match) matches.push(memory.id);
        if (node.hasClass("match") !== Boolean(match)) node.toggleClass("match", Boolean(match));
        const dim = active && !match;
        if (node.hasClass("dimmed") !== dim) node.toggleClass("dimmed", dim);
      });
      cy.edges().forEach((edge) => {
        if (edge.hasClass("dimmed") !== active) edge.toggleClass("dimmed", active);
      });
    });
    this.matchIds = matches.sort((a, b) => a - b);
    this.filterPanel.showMatches(matches.length);
  }

  _filtersChanged(what) {
    if (what === "search" || what === "search-next") {
      this._highlight();
      if (this.tab === "list") this.table.render(this.visibleIds);
      if (this.tab === "interactions") this.interactionTable.render();
      if (this.tab === "failed") this.failedTable.render();
      if (what === "search-next" && this.matchIds.length) {
        this.matchCursor = (this.matchCursor + 1) % this.matchIds.length;
        this.select({ type: "memory", id: this.matchIds[this.matchCursor] }, { center: true });
      }
      return;
    }
    this._refilter();
  }

  _filterEntity(name) {
    this.filters.entity = name.toLowerCase();
    this.filterPanel.render();
    this._refilter();
  }

  /** A person changed a filter: apply it, and frame what is left so no shown node stays off-screen or in a
   * corner. (Live changes also re-apply the filters, but must not move the view: they call applyFilters.) */
  _refilter() {
    this.applyFilters();
    if (this.tab !== "graph" || (this.replay && this.replay.isOpen)) return;
    if (this.view.large) this.view.fitPositions();
    else this.view.fit();
  }

  select(selection, { center = false } = {}) {
    const linking = this.curation && this.curation.linking;
    if (linking && selection && selection.type === "memory" && selection.id !== linking) {
      clear(this.panel.root).append(this.curation.linkForm(selection.id, {
        model: this.model, onDone: () => this.select({ type: "memory", id: linking }) }));
      this.view.select(selection, { center: false });
      return;
    }
    this.selection = selection;
    this.view.select(selection, { center: center && this.tab === "graph" });
    this.panel.show(selection);
    if (selection && selection.type === "memory" && this.replay.isOpen) this.replay.focus(selection.id);
    this.table.selectedId = selection && selection.type === "memory" ? selection.id : null;
    for (const row of document.querySelectorAll("#memory-table tr.selected")) row.classList.remove("selected");
    if (this.table.selectedId !== null) {
      const row = document.querySelector(`#memory-table tr[data-memory-id="${this.table.selectedId}"]`);
      if (row) row.classList.add("selected");
    }
    document.body.classList.toggle("panel-open", Boolean(selection));
  }

  /** A memory's neighbourhood: framed in the graph, or, when the page holds only part of a large session,
   *  loaded around it. */
  expand(memoryId) {
    if (this.model.truncated) {
      const url = new URL(location.href);
      url.searchParams.set("around", String(memoryId));
      location.assign(url);
      return;
    }
    this.select({ type: "memory", id: memoryId });
    this.view.frameNeighbourhood(memoryId);
  }

  _menu(selection, at) {
    this.select(selection);
    const items = selection.type === "memory"
      ? [{ label: gettext("Expand neighbourhood"), run: () => this.expand(selection.id) }] : [];
    if (selection.type === "ghost") {
      items.push({ label: gettext("Open it in its session"), run: () => location.assign(this.panel.ghostUrl(selection.id)) });
    } else if (this.curation) items.push(...this.curation.menuActions(selection, this.model));
    const title = selection.type === "edge" ? interpolate(gettext("Edge #%s"), [selection.id])
      : interpolate(gettext("Memory #%s"), [selection.id]);
    this.menu.show(at.x, at.y, title, items);
  }

  /** A neighbourhood (?around=<id>) gets the Rings layout, first and chosen unless the graph is large: the
   *  server's force positions of a dense neighbourhood are a crowded cloud (issue 15). */
  _offerRings() {
    if (this.model.around === null || !this.model.memories.has(this.model.around)) return false;
    const force = document.querySelector("button[data-layout='force']");
    const rings = h("button", { type: "button", "data-layout": "rings", "aria-pressed": "false",
      title: gettext("The memory in the centre, the memories linked to it in rings by distance") }, gettext("Rings"));
    force.before(rings);
    this.view.cy.getElementById(nodeId(this.model.around)).addClass("focus");
    if (this.view.large) return false;
    this._markLayout("rings");
    document.documentElement.dataset.layout = "rings";
    return true;
  }

  _wireToolbar() {
    for (const button of document.querySelectorAll("[data-tab]")) {
      button.addEventListener("click", () => this._setTab(button.dataset.tab));
    }
    for (const button of document.querySelectorAll("button[data-layout]")) {
      button.addEventListener("click", () => this._layout(button.dataset.layout));
    }
    $("#btn-fit").addEventListener("click", () => this.view.fit());
    $("#btn-recall").addEventListener("click", () => {
      if (this.tab !== "graph") this._setTab("graph");
      this.replay.toggle();
    });
    $("#btn-zoom-in").addEventListener("click", () => this.view.zoomBy(1.4));
    $("#btn-zoom-out").addEventListener("click", () => this.view.zoomBy(1 / 1.4));
    $("#live-status").addEventListener("click", () => {
      if (!this.live) return;
      if (this.live.held) this.live.resume();
      else this.live.disconnect({ hold: true });
    });
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.curation && this.curation.linking) {
        const from = this.curation.linking;
        this.curation.stopLink();
        this.select({ type: "memory", id: from });
      } else if (event.key === "Escape" && this.selection) this.select(null);
      else if (event.key === "Escape" && this.replay.isOpen && !event.target.closest("input, select, textarea")) this.replay.close();
    });
  }

  async _openRecall(recallId) {
    if (this.tab !== "graph") this._setTab("graph");
    await this.replay.openRecall(recallId);
  }

  /** The toolbar's layout buttons: `name` pressed, the others not. */
  _markLayout(name) {
    for (const button of document.querySelectorAll("button[data-layout]")) {
      button.classList.toggle("active", button.dataset.layout === name);
      button.setAttribute("aria-pressed", String(button.dataset.layout === name));
    }
  }

  async _layout(name) {
    this._markLayout(name);
    this._overlay(gettext("Arranging…"));
    await new Promise((resolve) => setTimeout(resolve, 30)); // let the overlay paint before a long layout
    await this.view.layout(name, { animate: true });
    this._overlay(null);
    document.documentElement.dataset.layout = name;
  }

  _setTab(tab) {
    if (tab !== "graph" && this.replay && this.replay.isOpen) this.replay.close();
    this.tab = tab;
    for (const button of document.querySelectorAll("[data-tab]")) {
      const active = button.dataset.tab === tab;
      button.classList.toggle("active", active);
      button.setAttribute("aria-selected", String(active));
    }
    for (const name of TABS) $(`#view-${name}`).hidden = name !== tab;
    document.body.dataset.view = tab;
    if (tab === "graph") this.view.resize();
    if (tab === "list") this.table.render(this.visibleIds);
    if (tab === "interactions") this.interactionTable.render();
    if (tab === "failed") this.failedTable.render();
    history.replaceState(null, "", tab === "graph" ? location.pathname + location.search : `#${tab}`);
  }

  _stats() {
    $("#legend-elsewhere").hidden = !this.model.ghosts.size;
    let atRisk = 0;
    for (const memory of this.model.memories.values()) if (isAtRisk(memory)) atRisk += 1;
    $("#legend-at-risk").hidden = !atRisk;
    let edges = 0;
    const drawn = this.view.cy.edges("[!ghost]");
    drawn.forEach((e) => {
      if (!e.hasClass("hidden")) edges += 1;
    });
    const filtered = [...this.model.interactions.values()].filter((i) => i.status === "filtered").length;
    $("#graph-stats").textContent = interpolate(gettext("%(nodes)s of %(total)s memories · %(edges)s of %(totalEdges)s edges"), {
      nodes: this.visibleIds.size, total: this.model.memories.size, edges, totalEdges: drawn.length,
    }, true);
    $("#filtered-count").textContent = String(filtered);
    this._failedCount();
  }

  _liveStatus(state, detail = {}) {
    const badge = $("#live-status");
    const texts = {
      connecting: gettext("Connecting…"),
      reconnecting: gettext("Reconnecting…"),
      "catching-up": gettext("Catching up…"),
      live: gettext("Live"),
      paused: gettext("Paused"),
      forbidden: gettext("No live access"),
      offline: interpolate(gettext("Offline, retrying in %s s"), [Math.max(1, Math.round((detail.retryInMs || 0) / 1000))]),
    };
    badge.dataset.state = state;
    $("#live-status-text").textContent = texts[state] || state;
    badge.title = state === "paused" ? gettext("Click to resume live updates") : gettext("Click to pause live updates");
  }

  _overlay(text, error = false) {
    const overlay = $("#graph-overlay");
    overlay.hidden = !text;
    overlay.classList.toggle("error", error);
    overlay.textContent = text || "";
  }

  _truncatedNotice(graph) {
    const notice = $("#truncated-notice");
    notice.hidden = false;
    const values = { shown: this.model.memories.size, total: this.model.totalMemories, around: graph.around };
    const text = graph.around
      ? interpolate(gettext("Showing the %(shown)s memories around #%(around)s of %(total)s."), values, true)
      : interpolate(gettext("This session is large: showing its %(shown)s most recent memories of %(total)s."), values, true);
    const all = new URL(location.href);
    all.searchParams.delete("around");
    all.searchParams.delete("hops");
    all.searchParams.set("limit", String(Math.min(10000, this.model.totalMemories)));
    all.hash = "";
    notice.append(text, " ", h("a", { href: all.toString(), id: "load-all" }, gettext("Load all (slower)")));
  }
}

function boot() {
  const element = document.getElementById("cw-config");
  if (!element) return;
  const app = new SessionApp(JSON.parse(element.textContent));
  app.start().catch((error) => {
    console.error(error); // eslint-disable-line no-console
    const overlay = document.getElementById("graph-overlay");
    if (overlay) {
      overlay.hidden = false;
      overlay.textContent = String(error);
    }
  });
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
else boot();

export { nodeId };
