// The layouts. "force" uses the server's positions when every node has one (preset: instant),
// otherwise fcose in draft quality (spectral only, ~1 s for thousands of nodes) and remembers the
// result. "dag" runs dagre over dependency edges, parents before children (top-down or left-right,
// whichever the view shows larger). "timeline" puts time on x
// and one lane per kind on y. "rings", offered in a neighbourhood view (?around=<id>), puts that memory in the
// centre and the others in rings by hop distance (rings.js). All of them run only on request: live patches
// never relayout.

import { ringPositions } from "./rings.js";
import { isStructural, isStructuralRelation } from "./style.js";

const LANE_HEIGHT = 110;
const SUB_ROWS = 4;
const SMALL_GRAPH = 400;
// Room around a fitted layout: the legend (and the Timeline's axis) sit over the bottom of the view.
export const FIT_PADDING = 56;
const MIN_GAP = 46; // model units between the centres of two live-placed nodes (the largest is 42 wide)
const NEAR = 70;
const GOLDEN_ANGLE = Math.PI * (3 - Math.sqrt(5));

export const LAYOUTS = ["force", "dag", "timeline", "rings"];

function run(eles, options) {
  return new Promise((resolve) => {
    const layout = eles.layout(options);
    layout.one("layoutstop", () => resolve());
    layout.run();
  });
}

function presetFrom(eles, positions, animate) {
  return run(eles, {
    name: "preset",
    positions: (node) => positions.get(node.id()) || node.position(),
    fit: true,
    padding: FIT_PADDING,
    animate,
    animationDuration: 400,
  });
}

const GHOST_DISTANCE = 130; // model units from a ghost's anchor (the memory of this session its edge reaches)
const GHOST_FAN = 0.55; // radians between ghosts of one anchor

/** The memories of this session each ghost's edges reach (its anchors), by ghost id. */
function ghostAnchors(model) {
  const anchors = new Map();
  for (const edge of model.edges.values()) {
    for (const [ghost, other] of [[edge.source, edge.target], [edge.target, edge.source]]) {
      if (!model.ghosts.has(ghost) || !model.memories.has(other)) continue;
      if (!anchors.has(ghost)) anchors.set(ghost, []);
      anchors.get(ghost).push(other);
    }
  }
  return anchors;
}

/**
 * Where the ghosts go, given where this session's memories are (`positionOf(memoryId)` → {x, y} or null):
 * each beside its anchors, on the side away from the drawing's centre, level with them (so the edge runs
 * sideways and misses the label under the ghost; several ghosts of one anchor fan out), on a spot no node
 * takes. Ghosts are not the session's memories: no layout ranks, rings or times them, they follow the
 * memories they hang on.
 */
export function ghostSpots(model, positionOf) {
  const spots = new Map();
  if (!model.ghosts.size) return spots;
  const taken = [];
  let cx = 0;
  for (const id of model.memories.keys()) {
    const p = positionOf(id);
    if (!p) continue;
    taken.push(p);
    cx += p.x;
  }
  if (taken.length) cx /= taken.length;
  const anchors = ghostAnchors(model);
  const fans = new Map(); // anchors' key → ghosts hanging on them, in id order
  for (const ghost of [...model.ghosts.values()].sort((a, b) => a.id - b.id)) {
    const placed = (anchors.get(ghost.id) || []).map(positionOf).filter(Boolean);
    if (!placed.length) continue;
    const key = [...new Set(anchors.get(ghost.id))].sort((a, b) => a - b).join(",");
    if (!fans.has(key)) fans.set(key, { placed, ghosts: [] });
    fans.get(key).ghosts.push(ghost.id);
  }
  for (const { placed, ghosts } of fans.values()) {
    const ax = placed.reduce((sum, p) => sum + p.x, 0) / placed.length;
    const ay = placed.reduce((sum, p) => sum + p.y, 0) / placed.length;
    const side = ax >= cx ? 1 : -1; // a lone memory's ghosts go to its right
    ghosts.forEach((id, index) => {
      const angle = (index - (ghosts.length - 1) / 2) * GHOST_FAN;
      const spot = freeSpot({ x: ax + side * Math.cos(angle) * GHOST_DISTANCE, y: ay + Math.sin(angle) * GHOST_DISTANCE },
        id, taken);
      taken.push(spot);
      spots.set(id, spot);
    });
  }
  return spots;
}

/** The spot, or the nearest one on a widening spiral that no position in `taken` is within MIN_GAP of. */
function freeSpot(spot, seed, taken) {
  const isFree = (p) => taken.every((q) => (p.x - q.x) ** 2 + (p.y - q.y) ** 2 >= MIN_GAP ** 2);
  for (let attempt = 0; attempt < 60; attempt += 1) {
    const angle = (seed + attempt) * GOLDEN_ANGLE;
    const radius = attempt ? MIN_GAP * 0.6 * Math.sqrt(attempt) + MIN_GAP * 0.4 : 0;
    const candidate = { x: spot.x + Math.cos(angle) * radius, y: spot.y + Math.sin(angle) * radius };
    if (isFree(candidate)) return candidate;
  }
  return spot;
}

function snapshot(cy) {
  const positions = new Map();
  cy.nodes().forEach((node) => positions.set(node.id(), { ...node.position() }));
  return positions;
}

export class Layouts {
  constructor(cy, model) {
    this.cy = cy;
    this.model = model;
    this.forcePositions = null;
    this.current = "force";
    this.timeScale = null;
    this.laneGeometry = { height: LANE_HEIGHT, subRows: SUB_ROWS };
    this.dagDirection = "TB";
  }

  /** Run a layout; animate only for small graphs (switching layouts, not first paint). */
  async apply(name, { animate = false } = {}) {
    this.current = name;
    const large = this.cy.nodes().length > 600;
    const smooth = animate && !large;
    if (name === "dag") return this._dag(smooth);
    if (name === "timeline") return presetFrom(this.cy.nodes(), this._withGhosts(this._timeline()), smooth);
    if (name === "rings") return presetFrom(this.cy.nodes(), this._withGhosts(this._rings()), smooth);
    return this._force(smooth);
  }

  /** A layout's positions of the session's memories, with the ghosts placed beside the memories they reach. */
  _withGhosts(positions) {
    for (const [id, spot] of ghostSpots(this.model, (memoryId) => positions.get(`m${memoryId}`))) {
      positions.set(`o${id}`, spot);
    }
    return positions;
  }

  /** Where a ghost that arrives live goes: beside the memories of this session its edges reach, as drawn now. */
  placeGhost(ghostIdValue) {
    const one = { memories: this.model.memories, edges: this.model.edges,
      ghosts: new Map([[ghostIdValue, this.model.ghosts.get(ghostIdValue)]]) };
    const spots = ghostSpots(one, (memoryId) => {
      const node = this.cy.getElementById(`m${memoryId}`);
      return node.nonempty() ? node.position() : null;
    });
    const spot = spots.get(ghostIdValue);
    if (spot) return this._free(spot, ghostIdValue);
    const box = this.cy.nodes().nonempty() ? this.cy.nodes().boundingBox() : this.cy.extent();
    return this._free({ x: box.x2 + NEAR, y: box.y1 }, ghostIdValue);
  }

  /** The positions the view was created with (server or quick layout): nothing to run. */
  keepInitial() {
    this.forcePositions = snapshot(this.cy);
    this.current = "force";
  }

  async _force(animate) {
    if (this.forcePositions) return presetFrom(this.cy.nodes(), this.forcePositions, animate);
    if (this.model.hasServerPositions) {
      const positions = new Map();
      for (const memory of this.model.memories.values()) positions.set(`m${memory.id}`, memory.position);
      this.forcePositions = this._withGhosts(positions);
      return presetFrom(this.cy.nodes(), positions, animate);
    }
    const small = this.cy.nodes().length <= SMALL_GRAPH;
    await run(this.cy.elements(), {
      name: "fcose",
      // draft = spectral placement only: ~1 s for thousands of nodes; small graphs can afford refinement.
      quality: small ? "default" : "draft",
      randomize: true,
      animate: false,
      fit: true,
      padding: 30,
      nodeDimensionsIncludeLabels: false,
      uniformNodeDimensions: true,
      packComponents: false,
      nodeRepulsion: 9000,
      idealEdgeLength: 90,
      edgeElasticity: 0.3,
      sampleSize: 25,
      nodeSeparation: 80,
    });
    this.forcePositions = snapshot(this.cy);
    return undefined;
  }

  /** Dagre both ways, top-down and left-right, and keep the one the view shows larger: a long chain of
   *  dependencies top-down is a tall thin strip in a wide window. */
  async _dag(animate) {
    // Ranked by dependencies only: adjacency and shared entities chain nearly every memory to the next,
    // which made one rank per memory.
    const eles = this.cy.elements().filter((e) => !e.hasClass("hidden")
      && (e.isNode() || !isStructural(e)));
    const large = eles.nodes().length > 800;
    const options = (rankDir) => ({
      name: "dagre", rankDir, nodeSep: 18, rankSep: 70, edgeSep: 6,
      ranker: large ? "longest-path" : "network-simplex", fit: false, animate: false,
    });
    const before = snapshot(this.cy);
    const tried = [];
    for (const rankDir of large ? ["TB"] : ["TB", "LR"]) {
      await run(eles, options(rankDir));
      const box = eles.nodes().boundingBox();
      const scale = Math.min(this.cy.width() / Math.max(box.w, 1), this.cy.height() / Math.max(box.h, 1));
      tried.push({ rankDir, scale, positions: snapshot(this.cy) });
    }
    const best = tried.reduce((a, b) => (b.scale > a.scale * 1.05 ? b : a));
    this.dagDirection = best.rankDir;
    if (animate) this.cy.nodes().positions((node) => before.get(node.id()) || node.position());
    return presetFrom(eles.nodes(), best.positions, animate);
  }

  /** The neighbourhood's memory in the centre, the rest in rings by hops over the edges not rejected (the
   *  server's neighbourhood rule); a dependency pulls memories together more than adjacency or an entity. */
  _rings() {
    const memories = this.model.memories;
    const links = [];
    for (const edge of this.model.edges.values()) {
      if (edge.status !== "rejected") links.push([edge.source, edge.target, isStructuralRelation(edge.relation) ? 1 : 3]);
    }
    const spots = ringPositions([...memories.keys()], links, this.model.around, (id) => memories.get(id).time);
    const positions = new Map();
    for (const [id, spot] of spots) positions.set(`m${id}`, spot);
    return positions;
  }

  _timeline() {
    const nodes = this.model.memories;
    const { min, max } = this.model.timeRange();
    const width = Math.min(60000, Math.max(1200, nodes.size * 30));
    const span = Math.max(1, max - min);
    this.timeScale = { min, span, width };
    const kinds = [...new Set([...nodes.values()].map((m) => m.kind))].sort();
    this.lanes = new Map(kinds.map((kind, index) => [kind, index]));
    const positions = new Map();
    const lastX = new Map();
    const ordered = [...nodes.values()].sort((a, b) => a.time - b.time || a.id - b.id);
    for (const memory of ordered) positions.set(`m${memory.id}`, this._timelineSpot(memory, lastX));
    return positions;
  }

  _timelineSpot(memory, lastX = new Map()) {
    const scale = this.timeScale || { min: memory.time, span: 1, width: 1200 };
    if (!this.lanes.has(memory.kind)) this.lanes.set(memory.kind, this.lanes.size);
    const lane = this.lanes.get(memory.kind);
    const x = ((memory.time - scale.min) / scale.span) * scale.width;
    let row = 0;
    while (row < SUB_ROWS - 1 && x - (lastX.get(`${lane}:${row}`) ?? -Infinity) < 40) row += 1;
    lastX.set(`${lane}:${row}`, x);
    return { x, y: lane * LANE_HEIGHT + row * (LANE_HEIGHT / SUB_ROWS) };
  }

  /** Where a node that arrives live goes, given the current layout; never moves other nodes. Beside its
   *  neighbours (below or right of them in the DAG, at its time in the timeline), on the first free spot. */
  placeNew(memory, neighbours) {
    if (memory.position && this.current === "force" && this.model.hasServerPositions) {
      return this._free(memory.position, memory.id);
    }
    if (this.current === "timeline" && this.lanes) return this._free(this._timelineSpot(memory), memory.id, "y");
    const placed = neighbours.filter((n) => n && n.position);
    if (placed.length) {
      const cx = placed.reduce((sum, n) => sum + n.position.x, 0) / placed.length;
      const cy = placed.reduce((sum, n) => sum + n.position.y, 0) / placed.length;
      if (this.current === "dag" && this.dagDirection === "LR") {
        const rightmost = Math.max(...placed.map((n) => n.position.x));
        return this._free({ x: rightmost + 70, y: cy }, memory.id, "y");
      }
      if (this.current === "dag") {
        const lowest = Math.max(...placed.map((n) => n.position.y));
        return this._free({ x: cx, y: lowest + 70 }, memory.id, "x");
      }
      const angle = memory.id * GOLDEN_ANGLE;
      return this._free({ x: cx + Math.cos(angle) * NEAR, y: cy + Math.sin(angle) * NEAR }, memory.id);
    }
    const box = this.cy.nodes().nonempty() ? this.cy.nodes().boundingBox() : this.cy.extent();
    return this._free({ x: box.x2 + NEAR, y: (box.y1 + box.y2) / 2 }, memory.id);
  }

  /** The spot, or the nearest free one: tried along one axis (layouts with a meaning per axis) or on a
   *  widening spiral, until no node is closer than MIN_GAP. */
  _free(spot, id, axis = null) {
    const taken = this.cy.nodes().map((n) => n.position());
    const isFree = (p) => taken.every((q) => (p.x - q.x) ** 2 + (p.y - q.y) ** 2 >= MIN_GAP ** 2);
    for (let attempt = 0; attempt < 60; attempt += 1) {
      let candidate;
      if (attempt === 0) candidate = spot;
      else if (axis) {
        const step = Math.ceil(attempt / 2) * (MIN_GAP * 0.8) * (attempt % 2 ? 1 : -1);
        candidate = axis === "x" ? { x: spot.x + step, y: spot.y } : { x: spot.x, y: spot.y + step };
      } else {
        const angle = (id + attempt) * GOLDEN_ANGLE;
        const radius = MIN_GAP * 0.6 * Math.sqrt(attempt) + MIN_GAP * 0.4;
        candidate = { x: spot.x + Math.cos(angle) * radius, y: spot.y + Math.sin(angle) * radius };
      }
      if (isFree(candidate)) return candidate;
    }
    return spot;
  }
}
