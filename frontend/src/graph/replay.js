// Painting a stored recall on the graph, step by step: step 0 lights the seeds, step h the memories first
// reached at hop h (glow by activation) and the edges that carried it (width by what they passed), the last
// step the ranking. Memories of the trace that are not on this graph (gone since, or of another session)
// are drawn as ghosts from the trace, removed again when the replay closes.

import { shorten } from "../dom.js";
import { gettext } from "../i18n.js";
import { edgeId, ghostId, nodeId } from "./view.js";
import { kindShape, relationArrow } from "./style.js";

const REPLAY_CLASSES = "replay-on replay-off replay-seed replay-now replay-ranked replay-carry cmp-entered cmp-left cmp-moved";
const ghostNodeId = (memoryId) => `g${memoryId}`;
const ghostEdgeId = (edgeIdValue, from, to) => `ge${edgeIdValue || `${from}-${to}`}`;

/** The steps of a replay: 0 (seeds) … the last hop, then one more for the ranking. */
export function stepCount(replay) {
  const hops = replay.steps.map((s) => s.hop);
  return (hops.length ? Math.max(...hops) : 0) + 2;
}

/** Activation per memory reached up to `step` (several paths into one memory in one hop add up). */
export function activationUpTo(replay, step) {
  const totals = new Map();
  for (const { hop, arrivals } of replay.steps) {
    if (hop > step) continue;
    for (const arrival of arrivals) totals.set(arrival.memory_id, (totals.get(arrival.memory_id) || 0) + arrival.activation);
  }
  return totals;
}

/** The arrivals of hops 1…step: each is one edge carrying activation from one memory to another. */
export function carriedUpTo(replay, step) {
  return replay.steps.filter((s) => s.hop >= 1 && s.hop <= step).flatMap((s) => s.arrivals);
}

/** The arrivals on the paths of the ranked memories: the edges that brought the ranking about. */
export function rankingPaths(replay) {
  const onPath = new Set(replay.ranking.flatMap((r) => (r.path || []).filter((p) => p.edge_id)
    .map((p) => `${p.edge_id}:${p.from}:${p.to}`)));
  return replay.steps.flatMap((s) => s.arrivals)
    .filter((a) => a.hop >= 1 && onPath.has(`${a.edge_id}:${a.from}:${a.memory_id}`));
}

export class ReplayPainter {
  constructor(view, sessionId) {
    this.view = view;
    this.sessionId = sessionId;
    this.cy = view.cy;
    this.ghosts = this.cy.collection();
    this.lit = this.cy.collection(); // elements carrying any class but replay-off
    this.off = this.cy.collection(); // elements dimmed
    this.replay = null;
  }

  /** Start painting this replay (ghosts added for what the graph does not hold). */
  start(replay) {
    this.stop();
    this.replay = replay;
    this._addGhosts(replay);
  }

  stop() {
    const cy = this.cy;
    cy.batch(() => {
      this.lit.removeClass(REPLAY_CLASSES).removeData("rankLabel");
      this.off.removeClass("replay-off");
      this.ghosts.remove();
    });
    this.ghosts = cy.collection();
    this.lit = cy.collection();
    this.off = cy.collection();
    this.replay = null;
  }

  /** The memory's node: its own, the page's ghost of it (another session's memory an edge reaches), or the
   *  replay's ghost. */
  nodeOf(memoryId) {
    for (const id of [nodeId(memoryId), ghostId(memoryId)]) {
      const node = this.cy.getElementById(id);
      if (node.nonempty()) return node;
    }
    return this.cy.getElementById(ghostNodeId(memoryId));
  }

  edgeOf(arrival) {
    const real = arrival.edge_id ? this.cy.getElementById(edgeId(arrival.edge_id)) : this.cy.collection();
    return real.nonempty() ? real : this.cy.getElementById(ghostEdgeId(arrival.edge_id, arrival.from, arrival.memory_id));
  }

  /**
   * Show step `step` of the replay (see stepCount): what is lit, what carried, what ranked (the last step:
 * the ranked memories and the edges on their paths).
   * Only what differs from the step shown before is restyled: on a large graph restyling every element
   * costs more than the rest of the replay together. Large graphs dim the memories only (their edges are
   * faint already); the edges that carried activation are drawn strong either way.
   */
  show(step) {
    const replay = this.replay;
    if (!replay) return;
    const cy = this.cy;
    const last = stepCount(replay) - 1;
    const reached = activationUpTo(replay, Math.min(step, last - 1));
    const top = Math.max(1e-9, ...reached.values());
    const seeds = new Set(replay.seeds.map((s) => s.memory_id));
    const now = new Set(step < last ? (replay.steps.find((s) => s.hop === step) || { arrivals: [] }).arrivals.map((a) => a.memory_id) : []);
    const ranked = new Map(replay.ranking.map((r) => [r.memory_id, r.rank]));
    // The ranking step draws only the edges on the ranked memories' paths (all of them would bury those).
    const carried = step === last ? rankingPaths(replay) : carriedUpTo(replay, step);
    const passedMax = Math.max(1e-9, ...carried.map((a) => a.activation));
    cy.batch(() => {
      const shown = [];
      for (const [memoryId, value] of reached) {
        if (step === last && !ranked.has(memoryId)) continue;
        const node = this.nodeOf(memoryId);
        if (node.empty()) continue;
        node.data("glow", Math.min(1, value / top));
        const classes = ["replay-on"];
        if (seeds.has(memoryId)) classes.push("replay-seed");
        if (now.has(memoryId)) classes.push("replay-now");
        if (step === last) {
          node.data("rankLabel", `${ranked.get(memoryId)}. ${node.data("label")}`);
          classes.push("replay-ranked");
        }
        this._classes(node, classes);
        shown.push(node);
      }
      for (const arrival of carried) {
        const edge = this.edgeOf(arrival);
        if (edge.empty()) continue;
        edge.data("carry", Math.min(1, arrival.activation / passedMax));
        edge.data("carryLabel", arrival.activation.toFixed(2));
        this._classes(edge, ["replay-carry"]);
        shown.push(edge);
      }
      const lit = cy.collection(shown);
      this.lit.difference(lit).removeClass(REPLAY_CLASSES);
      this.lit = lit;
      const dimmable = this.view.large ? cy.nodes() : cy.elements();
      const off = dimmable.difference(lit);
      this.off.difference(off).removeClass("replay-off");
      off.difference(this.off).addClass("replay-off");
      this.off = off;
    });
  }

  /** Give an element exactly these replay classes (untouched when it has them already). */
  _classes(element, wanted) {
    const stale = REPLAY_CLASSES.split(" ").filter((c) => element.hasClass(c) && !wanted.includes(c));
    if (stale.length) element.removeClass(stale.join(" "));
    const missing = wanted.filter((c) => !element.hasClass(c));
    if (missing.length) element.addClass(missing.join(" "));
  }

  /** Mark a comparison on the graph: what entered the second recall, what left it, what moved. */
  markComparison(diff) {
    this.cy.batch(() => {
      const marked = [];
      for (const [entries, cls] of [[diff.entered, "cmp-entered"], [diff.moved, "cmp-moved"], [diff.left, "cmp-left"]]) {
        for (const { memory_id: id } of entries) marked.push(this.nodeOf(id).addClass(cls));
      }
      this.lit = this.lit.union(this.cy.collection(marked));
    });
  }

  /** Frame what the replay lit (ghosts included). */
  fit() {
    const lit = this.cy.elements(".replay-on, .replay-carry, .cmp-left");
    if (lit.nonempty()) this.cy.animate({ fit: { eles: lit, padding: 40 } }, { duration: 250 });
    this.view.capZoom();
  }

  /** The nodes' extent from their positions (a bounding box would measure every label). */
  _extent() {
    let x2 = -Infinity;
    let y1 = Infinity;
    this.cy.nodes().forEach((node) => {
      const p = node.position();
      if (p.x > x2) x2 = p.x;
      if (p.y < y1) y1 = p.y;
    });
    return Number.isFinite(x2) ? { x2, y1 } : { x2: 0, y1: 0 };
  }

  _addGhosts(replay) {
    const cy = this.cy;
    const drawn = (id) => cy.getElementById(nodeId(id)).nonempty() || cy.getElementById(ghostId(id)).nonempty();
    const missing = Object.values(replay.memories).filter((m) => !drawn(m.id));
    const arrivals = replay.steps.flatMap((s) => s.arrivals).filter((a) => a.hop >= 1);
    const from = new Map(arrivals.map((a) => [a.memory_id, a.from]));
    const box = missing.length ? this._extent() : null;
    const elements = [];
    missing.forEach((memory, index) => {
      const anchor = cy.getElementById(nodeId(from.get(memory.id)));
      const angle = index * 2.399;
      const position = anchor.nonempty()
        ? { x: anchor.position("x") + 70 * Math.cos(angle), y: anchor.position("y") + 70 * Math.sin(angle) }
        : { x: box.x2 + 90 + 110 * Math.floor(index / 8), y: box.y1 + 60 * (index % 8) };
      let where = gettext("no longer exists");
      if (memory.exists) where = memory.session_id === this.sessionId ? gettext("not loaded here") : gettext("another session");
      elements.push({ group: "nodes", classes: "ghost", position, data: {
        id: ghostNodeId(memory.id), mid: memory.id, ghost: true, kind: memory.kind, color: "#e2e8f0",
        shape: kindShape(memory.kind), importance: 2,
        label: `#${memory.id} ${shorten(memory.masked || memory.text, 24)} (${where})` } });
    });
    const known = new Set(missing.map((m) => m.id));
    const endpoint = (id) => {
      if (cy.getElementById(nodeId(id)).nonempty()) return nodeId(id);
      if (cy.getElementById(ghostId(id)).nonempty()) return ghostId(id);
      return known.has(id) ? ghostNodeId(id) : null;
    };
    const seen = new Set();
    for (const arrival of arrivals) {
      if (arrival.edge_id && cy.getElementById(edgeId(arrival.edge_id)).nonempty()) continue;
      const id = ghostEdgeId(arrival.edge_id, arrival.from, arrival.memory_id);
      const source = endpoint(arrival.from);
      const target = endpoint(arrival.memory_id);
      if (seen.has(id) || !source || !target) continue;
      seen.add(id);
      elements.push({ group: "edges", classes: "ghost", data: { id, eid: arrival.edge_id, ghost: true, source, target,
        relation: arrival.relation, color: "#64748b", arrow: relationArrow(arrival.relation), confidence: 0.5 } });
    }
    this.ghosts = elements.length ? cy.add(elements) : cy.collection();
  }
}
