// The Cytoscape view of the model: builds elements once, then patches them in place.

import cytoscape from "cytoscape";
import dagre from "cytoscape-dagre";
import fcose from "cytoscape-fcose";

import { shorten } from "../dom.js";
import { gettext, interpolate } from "../i18n.js";
import { fitLabels } from "./label_fit.js";
import { FIT_PADDING, ghostSpots, Layouts } from "./layouts.js";
import { TimelineAxis } from "./timeline_axis.js";
import { isAtRisk, isKnownOrigin } from "../model.js";
import { isStructural, kindColor, kindShape, relationArrow, relationColor, stylesheet } from "./style.js";

cytoscape.use(fcose);
cytoscape.use(dagre);

// Cytoscape inserts an inline <style> (position: relative on its container) unless an element with this id
// exists. The Content-Security-Policy refuses inline styles, and app.css positions #cy already, so a marker
// element stands in for it.
const CYTOSCAPE_STYLESHEET_ID = "__________cytoscape_stylesheet";

function markCytoscapeStylesheet() {
  if (document.getElementById(CYTOSCAPE_STYLESHEET_ID)) return;
  const marker = document.createElement("meta");
  marker.id = CYTOSCAPE_STYLESHEET_ID;
  document.head.append(marker);
}

const LARGE_NODES = 800;
const LARGE_EDGES = 1600;
const PULSE_MS = 2400;
const EDGE_CHUNK = 1500; // edges added per task while a large graph fills in
const LABEL_ZOOM = 0.75; // large graphs label only the nodes in view, from this zoom on
const MAX_LABELLED = 400;
const FRAME_WHOLE = 60; // up to this many shown memories, the live view keeps the whole graph framed

export const nodeId = (memoryId) => `m${memoryId}`;
// A ghost: another session's memory at the far end of an edge (never a node id a memory of this session has).
export const ghostId = (memoryId) => `o${memoryId}`;

/**
 * A cheap first placement for large graphs without server positions, O(nodes + edges): a sunflower
 * spiral in time order (newest outside), then two passes pulling each node towards its neighbours.
 */
export function quickLayout(model) {
  const memories = [...model.memories.values()].sort((a, b) => a.time - b.time || a.id - b.id);
  const golden = Math.PI * (3 - Math.sqrt(5));
  const spot = new Map();
  memories.forEach((memory, index) => {
    const radius = 28 * Math.sqrt(index + 1);
    spot.set(memory.id, { x: radius * Math.cos(index * golden), y: radius * Math.sin(index * golden) });
  });
  const neighbours = new Map(memories.map((m) => [m.id, []]));
  for (const edge of model.edges.values()) {
    if (neighbours.has(edge.source) && neighbours.has(edge.target)) {
      neighbours.get(edge.source).push(edge.target);
      neighbours.get(edge.target).push(edge.source);
    }
  }
  for (let pass = 0; pass < 2; pass += 1) {
    const next = new Map();
    for (const [id, list] of neighbours) {
      const own = spot.get(id);
      if (!list.length) {
        next.set(id, own);
        continue;
      }
      let x = 0;
      let y = 0;
      for (const other of list) {
        x += spot.get(other).x;
        y += spot.get(other).y;
      }
      next.set(id, { x: own.x * 0.6 + (x / list.length) * 0.4, y: own.y * 0.6 + (y / list.length) * 0.4 });
    }
    for (const [id, position] of next) spot.set(id, position);
  }
  for (const memory of memories) memory.draftPosition = spot.get(memory.id);
}
export const edgeId = (id) => `e${id}`;

/** What a ghost's session is called: its title, else its number. */
export function sessionName(ghost) {
  return ghost.sessionTitle || interpolate(gettext("session #%s"), [ghost.sessionId]);
}

export class GraphView {
  constructor(container, model, { canSeeSensitive, onSelect, onExpand = () => {}, onMenu = () => {},
    kindLabel = (kind) => kind }) {
    this.model = model;
    this.canSeeSensitive = canSeeSensitive;
    this.onSelect = onSelect;
    this.large = model.memories.size > LARGE_NODES || model.edges.size > LARGE_EDGES;
    // Large graphs are drawn nodes first (interactive at once), edges in chunks right after.
    if (this.large && !model.hasServerPositions) quickLayout(model);
    this.pendingEdges = this.large ? this._edgeElements() : [];
    markCytoscapeStylesheet();
    this.cy = cytoscape({
      container,
      elements: this.large ? [...this._nodeElements(), ...this._ghostElements()]
        : [...this._nodeElements(), ...this._ghostElements(), ...this._edgeElements()],
      style: stylesheet({ large: this.large }),
      layout: { name: "preset", fit: false },
      minZoom: 0.02,
      maxZoom: 4,
      textureOnViewport: this.large,
      hideEdgesOnViewport: this.large,
      hideLabelsOnViewport: this.large,
      motionBlur: false,
      pixelRatio: this.large ? 1 : "auto",
      boxSelectionEnabled: false,
    });
    this.layouts = new Layouts(this.cy, model);
    this.timeline = new TimelineAxis(this.cy, this.layouts, container.parentElement, kindLabel);
    const picked = (node) => (node.data("gid") ? { type: "ghost", id: node.data("gid") } : { type: "memory", id: node.data("mid") });
    this.cy.on("tap", "node", (event) => this.onSelect(picked(event.target)));
    // Double-click a memory: its neighbourhood; right-click a memory or an edge: its actions.
    this.cy.on("dbltap", "node", (event) => !event.target.data("gid") && onExpand(event.target.data("mid")));
    this.cy.on("cxttap", "node", (event) => onMenu(picked(event.target), event.renderedPosition));
    this.cy.on("cxttap", "edge", (event) => onMenu({ type: "edge", id: event.target.data("eid") },
      event.renderedPosition));
    container.addEventListener("contextmenu", (event) => event.preventDefault());
    // Hover: the full text, on top, whatever the label fitting hid.
    this.cy.on("mouseover", "node", (event) => event.target.addClass("hover"));
    this.cy.on("mouseout", "node", (event) => event.target.removeClass("hover"));
    this.labelTimer = null;
    this.following = null; // the view's animation towards the latest live arrival
    // Follow new live memories until the person moves the view themselves (wheel, drag, a zoom button).
    this.userMoved = false;
    container.addEventListener("wheel", () => { this.userMoved = true; }, { passive: true });
    this.cy.on("tapstart", (event) => { this.panAtTap = event.target === this.cy ? { ...this.cy.pan() } : null; });
    this.cy.on("tapend", () => {
      const pan = this.cy.pan();
      // (A follow animation also moves the pan: not the person's doing.)
      if (this.panAtTap && !this.cy.animated() && (pan.x !== this.panAtTap.x || pan.y !== this.panAtTap.y)) {
        this.userMoved = true;
      }
      this.panAtTap = null;
    });
    this.cy.on("grab", "node", () => { this.userMoved = true; });
    if (!this.large) {
      this.cy.on("viewport", () => this.refitLabels(120));
      this.cy.on("select unselect", "node", () => this.refitLabels(0));
    }
    this.cy.on("tap", "edge", (event) => this.onSelect({ type: "edge", id: event.target.data("eid") }));
    this.cy.on("tap", (event) => {
      if (event.target === this.cy) this.onSelect(null);
    });
  }

  /** Readable, non-overlapping labels for the current view (small graphs; see label_fit.js). */
  refitLabels(delay = 0) {
    if (this.large) return;
    clearTimeout(this.labelTimer);
    this.labelTimer = setTimeout(() => fitLabels(this.cy), delay);
  }

  _masked(memory) {
    return memory.sensitive && (!this.canSeeSensitive || memory.content === "[sensitive]");
  }

  fullLabel(memory) {
    const text = this._masked(memory) ? `••• ${gettext("sensitive")}` : shorten(memory.content || memory.label, 240);
    return isAtRisk(memory) ? `⚠ ${gettext("may be out of date")}\n${text}` : text;
  }

  label(memory) {
    const text = this._masked(memory) ? `••• ${gettext("sensitive")}` : shorten(memory.label || memory.content, 36);
    return isAtRisk(memory) ? `⚠ ${text}` : text;
  }

  nodeData(memory) {
    return {
      id: nodeId(memory.id),
      mid: memory.id,
      label: this.label(memory),
      fullLabel: this.fullLabel(memory),
      kind: memory.kind,
      color: kindColor(memory.kind),
      shape: kindShape(memory.kind),
      importance: Math.max(1, Math.min(5, memory.importance || 3)),
      status: memory.status,
      sensitive: memory.sensitive,
      atRisk: isAtRisk(memory) ? memory.atRisk : 0,
    };
  }

  /** A ghost's node: faded, dashed, its label naming the session it belongs to. */
  ghostData(ghost) {
    const masked = ghost.sensitive && (!this.canSeeSensitive || ghost.content === "[sensitive]");
    const text = masked ? `••• ${gettext("sensitive")}` : (ghost.label || ghost.content);
    const where = sessionName(ghost);
    return {
      id: ghostId(ghost.id),
      gid: ghost.id,
      label: `${shorten(text, 20)}\n↗ ${shorten(where, 20)}`,
      fullLabel: `${masked ? text : shorten(ghost.content, 240)}\n(${interpolate(gettext("another session: %s"), [where])})`,
      kind: ghost.kind,
      color: kindColor(ghost.kind),
      shape: kindShape(ghost.kind),
      importance: 2,
      status: ghost.status,
      sensitive: ghost.sensitive,
      elsewhere: true,
    };
  }

  /** The node an edge end is drawn at: the memory's, or its ghost's; null when the page holds neither. */
  endId(memoryId) {
    if (this.model.memories.has(memoryId)) return nodeId(memoryId);
    return this.model.ghosts.has(memoryId) ? ghostId(memoryId) : null;
  }

  edgeData(edge) {
    return {
      id: edgeId(edge.id),
      eid: edge.id,
      source: this.endId(edge.source),
      target: this.endId(edge.target),
      crossing: !this.model.memories.has(edge.source) || !this.model.memories.has(edge.target),
      relation: edge.relation,
      color: relationColor(edge.relation),
      arrow: relationArrow(edge.relation),
      status: edge.status,
      origin: edge.origin,
      known: isKnownOrigin(edge.origin),
      needsReview: edge.needsReview,
      confidence: Math.max(0, Math.min(1, edge.confidence)),
    };
  }

  _nodeElements() {
    const elements = [];
    for (const memory of this.model.memories.values()) {
      const element = { group: "nodes", data: this.nodeData(memory) };
      const position = memory.position || memory.draftPosition;
      if (position) element.position = { ...position };
      elements.push(element);
    }
    return elements;
  }

  _ghostElements() {
    const spots = ghostSpots(this.model, (id) => {
      const memory = this.model.memories.get(id);
      return memory ? memory.position || memory.draftPosition || null : null;
    });
    return [...this.model.ghosts.values()].map((ghost) => {
      const element = { group: "nodes", classes: "elsewhere", data: this.ghostData(ghost) };
      if (spots.has(ghost.id)) element.position = { ...spots.get(ghost.id) };
      return element;
    });
  }

  _edgeElements() {
    const elements = [];
    for (const edge of this.model.edges.values()) {
      if (this.endId(edge.source) && this.endId(edge.target)) {
        elements.push({ group: "edges", data: this.edgeData(edge) });
      }
    }
    return elements;
  }

  /** Add the edges held back at creation, a chunk per task, so the page answers input meanwhile. */
  async fillEdges(isEdgeVisible) {
    const cy = this.cy;
    while (this.pendingEdges.length) {
      const chunk = this.pendingEdges.splice(0, EDGE_CHUNK);
      cy.batch(() => {
        for (const element of chunk) {
          if (cy.getElementById(element.data.id).nonempty()) continue; // a live patch got there first
          const edge = this.model.edges.get(element.data.eid);
          if (!edge || cy.getElementById(element.data.source).empty() || cy.getElementById(element.data.target).empty()) continue;
          element.classes = isEdgeVisible(edge) ? "" : "hidden";
          cy.add(element);
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }

  /** Frame the shown nodes from their positions (cheaper than cy.fit(), which measures every element). */
  fitPositions(padding = 30) {
    const cy = this.cy;
    let x1 = Infinity;
    let y1 = Infinity;
    let x2 = -Infinity;
    let y2 = -Infinity;
    cy.nodes().forEach((node) => {
      if (node.hasClass("hidden")) return;
      const p = node.position();
      if (p.x < x1) x1 = p.x;
      if (p.x > x2) x2 = p.x;
      if (p.y < y1) y1 = p.y;
      if (p.y > y2) y2 = p.y;
    });
    if (!Number.isFinite(x1)) return;
    const width = Math.max(1, x2 - x1 + 60);
    const height = Math.max(1, y2 - y1 + 60);
    const zoom = Math.min(1.4, Math.max(cy.minZoom(), Math.min((cy.width() - 2 * padding) / width,
      (cy.height() - 2 * padding) / height)));
    cy.viewport({ zoom, pan: { x: cy.width() / 2 - zoom * (x1 + x2) / 2, y: cy.height() / 2 - zoom * (y1 + y2) / 2 } });
  }

  /** Large graphs: show labels only when zoomed in, and only on the nodes in view. */
  watchLabels() {
    if (!this.large) return;
    let timer = null;
    const update = () => {
      const cy = this.cy;
      const labelled = cy.nodes(".labelled");
      if (cy.zoom() < LABEL_ZOOM) {
        labelled.removeClass("labelled");
        return;
      }
      const extent = cy.extent();
      const inView = cy.nodes().filter((node) => {
        const p = node.position();
        return p.x >= extent.x1 && p.x <= extent.x2 && p.y >= extent.y1 && p.y <= extent.y2;
      });
      cy.batch(() => {
        labelled.difference(inView).removeClass("labelled");
        inView.slice(0, MAX_LABELLED).addClass("labelled");
      });
    };
    this.cy.on("viewport", () => {
      clearTimeout(timer);
      timer = setTimeout(update, 150);
    });
  }

  async layout(name, options) {
    await this.layouts.apply(name, options);
    this.capZoom();
    this._recede(this.cy.edges());
    this.timeline.show(name === "timeline");
    this.refitLabels(0);
  }

  /** On a time axis, adjacency and shared entities say little and criss-cross the lanes: they recede. In rings
   *  they are most of a neighbourhood's edges (it was reached through them): they fade, so the rings and the
   *  dependencies between memories read. */
  _recede(edges) {
    const structural = edges.filter(isStructural);
    structural.toggleClass("quiet", this.layouts.current === "timeline");
    structural.toggleClass("faint", this.layouts.current === "rings");
  }

  /** A graph of a few nodes should not be blown up to fill the screen. */
  capZoom(max = 1.4) {
    const cy = this.cy;
    if (cy.zoom() > max) cy.zoom({ level: max, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
  }

  /** Draw a model Patch: add (placed near neighbours, pulsing), update, remove. No relayout. */
  patch(patch, isVisible) {
    const cy = this.cy;
    const added = cy.collection();
    const ghosts = patch.ghosts || { added: [], updated: [], removed: [] };
    cy.batch(() => {
      for (const id of patch.edges.removed) cy.getElementById(edgeId(id)).remove();
      for (const id of patch.memories.removed) cy.getElementById(nodeId(id)).remove();
      for (const id of ghosts.removed) cy.getElementById(ghostId(id)).remove();
      for (const memory of patch.memories.updated) {
        const node = cy.getElementById(nodeId(memory.id));
        if (node.nonempty()) node.data(this.nodeData(memory));
      }
      for (const ghost of ghosts.updated) {
        const node = cy.getElementById(ghostId(ghost.id));
        if (node.nonempty()) node.data(this.ghostData(ghost));
      }
      for (const memory of patch.memories.added) {
        const position = this.layouts.placeNew(memory, this._neighbourSpots(memory.id));
        const node = cy.add({ group: "nodes", data: this.nodeData(memory), position });
        added.merge(node);
      }
      for (const ghost of ghosts.added) {
        if (cy.getElementById(ghostId(ghost.id)).nonempty()) continue;
        const position = this.layouts.placeGhost(ghost.id);
        added.merge(cy.add({ group: "nodes", classes: "elsewhere", data: this.ghostData(ghost), position }));
      }
      for (const edge of [...patch.edges.added, ...patch.edges.updated]) {
        const existing = cy.getElementById(edgeId(edge.id));
        const [source, target] = [this.endId(edge.source), this.endId(edge.target)];
        if (existing.nonempty()) existing.data(this.edgeData(edge));
        else if (source && target && cy.getElementById(source).nonempty() && cy.getElementById(target).nonempty()) {
          added.merge(cy.add({ group: "edges", data: this.edgeData(edge) }));
        }
      }
      added.forEach((element) => {
        const visible = isVisible(element);
        element.toggleClass("hidden", !visible);
      });
      this._recede(added.edges());
    });
    if (added.nonempty()) this._pulse(added);
    if (added.nodes().nonempty()) this._follow(added.nodes().filter((n) => !n.hasClass("hidden") && !n.data("gid")));
    if (added.nodes().nonempty() || patch.memories.updated.length || ghosts.updated.length) this.refitLabels(200);
    if (patch.recalls.length) this._flashRecall(patch.recalls);
    return added;
  }

  /** Keep new memories in view while the person has not moved it: a small graph stays framed whole (it is
   *  re-framed on every arrival, so it stays centred as it grows); a larger one follows its newest memory at the
   *  person's zoom, since framing hundreds of memories would shrink them to dots. */
  _follow(nodes) {
    if (this.userMoved || nodes.empty()) return;
    const cy = this.cy;
    const shown = cy.nodes().filter((n) => !n.hasClass("hidden"));
    if (shown.length <= FRAME_WHOLE) {
      this._moveView(this.framing(shown));
      return;
    }
    const newest = nodes[nodes.length - 1];
    const p = newest.renderedPosition();
    const margin = FIT_PADDING;
    if (p.x >= margin && p.x <= cy.width() - margin && p.y >= margin && p.y <= cy.height() - margin) return;
    this._moveView({ center: { eles: newest } });
  }

  /** Animate the view for a new arrival, from wherever the previous arrival's animation got to. Never over a
   *  layout's own animation: stopping it would leave the layout unfinished (its promise waits for it). */
  _moveView(target) {
    if (this.following && this.following.playing()) this.following.stop();
    else if (this.cy.animated()) return;
    this.following = this.cy.animation({ ...target, duration: 300 });
    this.following.play();
  }

  /** The viewport that frames `eles` with FIT_PADDING (room for the legend) at no more than `maxZoom`: one
   *  target that Fit sets and an animation can move to without a jump at its end. */
  framing(eles, maxZoom = 1.4) {
    const cy = this.cy;
    const box = eles.boundingBox();
    const fitZoom = Math.min((cy.width() - 2 * FIT_PADDING) / Math.max(box.w, 1),
      (cy.height() - 2 * FIT_PADDING) / Math.max(box.h, 1));
    const zoom = Math.max(cy.minZoom(), Math.min(maxZoom, cy.maxZoom(), fitZoom));
    return { zoom, pan: { x: (cy.width() - zoom * (box.x1 + box.x2)) / 2, y: (cy.height() - zoom * (box.y1 + box.y2)) / 2 } };
  }

  _neighbourSpots(memoryId) {
    const spots = [];
    for (const edge of this.model.edgesOf(memoryId)) {
      const other = edge.source === memoryId ? edge.target : edge.source;
      const node = this.cy.getElementById(nodeId(other));
      if (node.nonempty()) spots.push({ position: node.position() });
    }
    return spots;
  }

  _pulse(elements) {
    const visible = elements.filter((e) => !e.hasClass("hidden"));
    visible.addClass("pulse");
    setTimeout(() => visible.removeClass("pulse"), PULSE_MS);
  }

  _flashRecall(recalls) {
    const ids = new Set(recalls.flatMap((r) => r.memory_ids || []));
    const nodes = this.cy.nodes().filter((n) => ids.has(n.data("mid")));
    nodes.addClass("recalled");
    setTimeout(() => nodes.removeClass("recalled"), PULSE_MS * 2);
  }

  select(selection, { center = false } = {}) {
    const cy = this.cy;
    cy.batch(() => {
      cy.$(":selected").unselect();
      cy.nodes(".neighbour").removeClass("neighbour");
      if (!selection) return;
      const ids = { memory: nodeId, ghost: ghostId, edge: edgeId };
      const element = cy.getElementById((ids[selection.type] || edgeId)(selection.id));
      if (element.empty()) return;
      element.select();
      if (element.isNode()) element.neighborhood("node").addClass("neighbour");
      if (center) cy.animate({ center: { eles: element }, zoom: Math.max(cy.zoom(), 1) }, { duration: 300 });
    });
  }

  /** The selected at-risk memory's way back to what changed (its risks' `path` edges, parent first, and the
   *  changed memories), drawn amber; the edges this page does not hold (another session's) are left out. */
  showRiskPath(risks) {
    this.clearRiskPath();
    const cy = this.cy;
    cy.batch(() => {
      for (const risk of risks) {
        for (const id of risk.path || []) cy.getElementById(edgeId(id)).addClass("risk-path");
        for (const id of [nodeId(risk.parent_id), ghostId(risk.parent_id)]) cy.getElementById(id).addClass("risk-source");
      }
    });
  }

  clearRiskPath() {
    this.cy.elements(".risk-path, .risk-source").removeClass("risk-path risk-source");
  }

  resize() {
    this.cy.resize();
  }

  /** Frame a memory with the memories it is linked to (the person asked: the view is theirs now). */
  frameNeighbourhood(memoryId) {
    const node = this.cy.getElementById(nodeId(memoryId));
    if (node.empty()) return;
    this.userMoved = true;
    const around = node.closedNeighborhood().filter((e) => !e.hasClass("hidden"));
    this.cy.animate({ ...this.framing(around, 2), duration: 300 });
  }

  fit() {
    this.userMoved = false; // framing everything again: new memories are followed once more
    const visible = this.cy.elements().filter((e) => !e.hasClass("hidden"));
    const framed = visible.nonempty() ? visible : this.cy.elements();
    if (framed.nonempty()) this.cy.viewport(this.framing(framed));
  }

  zoomBy(factor) {
    this.userMoved = true;
    const cy = this.cy;
    cy.zoom({ level: cy.zoom() * factor, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
  }
}
