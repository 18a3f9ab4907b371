// Colours, shapes and the Cytoscape stylesheet. Node colour and shape = kind, size = importance, faded =
// superseded or archived, dashed outline + masked label = sensitive, faded + dashed grey outline + italic label
// = a ghost (another session's memory an edge reaches), an amber ring outside the node (wider and stronger the
// higher the risk) and "⚠" before the label = at risk (something it depends on changed). Edge colour and
// arrowhead = relation; solid = known (declared by the agent, learned from use, a person's) or approved, dashed =
// guessed (a rule's or an LLM's, not decided), dotted and faint = rejected; a proposal (needs_review) keeps its
// relation's colour and is drawn thick and dotted on a pale halo. The edges through which an at-risk memory
// depends on what changed are drawn amber while it is selected.
//
// Every kind and every relation differs in shape as well as colour, so no one needs to tell two hues apart.
// The colours are Paul Tol's "muted" (kinds) and "vibrant" (relations) schemes, which stay apart under the
// common colour-vision deficiencies; tests/test_palette.py simulates them and checks the distances.

export const KIND_COLORS = {
  fact: "#332288",
  preference: "#aa4499",
  constraint: "#cc6677",
  intent: "#88ccee",
  decision: "#ddcc77",
  action: "#117733",
  result: "#44aa99",
  error: "#882255",
  event: "#999933",
  summary: "#9977ff",
};

// Cytoscape node shapes, chosen to be told apart at 14 px: a decision is the flowchart's diamond, an
// error the warning triangle, a constraint the stop sign's octagon.
export const KIND_SHAPES = {
  fact: "ellipse",
  preference: "star",
  constraint: "octagon",
  intent: "rhomboid",
  decision: "diamond",
  action: "round-rectangle",
  result: "hexagon",
  error: "triangle",
  event: "pentagon",
  summary: "cut-rectangle",
};

export const RELATION_COLORS = {
  causal: "#0077bb",
  temporal: "#33bbee",
  conditional: "#ee7733",
  elaborates: "#009988",
  supersedes: "#cc3311",
  part_of: "#ee3377",
  references: "#555555",
  summarizes: "#000000",
  shares_entity: "#bbbbbb",
  next_in_session: "#dddddd",
  next_by_speaker: "#f4c488",
};

export const RELATION_ARROWS = {
  causal: "triangle",
  temporal: "vee",
  conditional: "diamond",
  elaborates: "circle",
  supersedes: "triangle-tee",
  part_of: "square",
  references: "chevron",
  summarizes: "triangle-backcurve",
  shares_entity: "none",
  next_in_session: "tee",
  next_by_speaker: "circle-triangle",
};

// Edges the engine draws for adjacency, a speaker's turns and shared entities, not claimed dependencies: layouts rank without
// them and the timeline lets them recede.
const STRUCTURAL_RELATIONS = new Set(["next_in_session", "next_by_speaker", "shares_entity"]);

export function isStructuralRelation(relation) {
  return STRUCTURAL_RELATIONS.has(relation);
}

export function isStructural(edge) {
  return isStructuralRelation(edge.data("relation"));
}

// The halo under a proposal: pale, so the relation's own colour still reads on top of it.
export const PROPOSAL_HALO = "#f0e442";

export function kindColor(kind) {
  return KIND_COLORS[kind] || "#94a3b8";
}

export function kindShape(kind) {
  return KIND_SHAPES[kind] || "ellipse";
}

export function relationColor(relation) {
  return RELATION_COLORS[relation] || "#94a3b8";
}

export function relationArrow(relation) {
  return RELATION_ARROWS[relation] || "triangle";
}

const REPLAY_COLOR = "#2563eb";
// At risk: an amber apart from the search match's (#f59e0b, a border) and drawn as a ring outside the node.
export const RISK_COLOR = "#d97706";
const RISK_PATH_COLOR = "#b45309";

/** White or near-black text, whichever reads better on a #rrggbb background. */
export function textOn(color) {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16) / 255);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.6 ? "#1f2937" : "#ffffff";
}

/** @param {{large: boolean}} mode large graphs trade arrows and curves for speed */
export function stylesheet({ large }) {
  return [
    {
      selector: "node",
      style: {
        "background-color": "data(color)",
        shape: "data(shape)",
        width: "mapData(importance, 1, 5, 14, 42)",
        height: "mapData(importance, 1, 5, 14, 42)",
        label: large ? "" : "data(label)",
        "font-size": 10,
        "font-family": "DejaVu Sans, Helvetica Neue, Arial, WenQuanYi Micro Hei, Noto Sans CJK SC, PingFang SC, sans-serif",
        color: "#1f2937",
        "text-valign": "bottom",
        "text-margin-y": 3,
        "text-wrap": "ellipsis",
        "text-max-width": 120,
        "text-background-color": "#ffffff",
        "text-background-opacity": 0.7,
        "text-background-padding": 1,
        "min-zoomed-font-size": large ? 9 : 4,
        "border-width": large ? 0 : 1.5,
        "border-color": "#ffffff",
        "overlay-padding": 4,
      },
    },
    { selector: 'node[status = "superseded"], node[status = "archived"]', style: { opacity: 0.35 } },
    // A ghost: another session's memory at the far end of an edge, faded with a dashed outline, its label in
    // italics naming that session (view.js ghostData).
    {
      selector: "node[?elsewhere]",
      style: { opacity: 0.9, "background-opacity": 0.3, "border-style": "dashed", "border-color": "#475569",
        "border-width": 2, "font-style": "italic", color: "#475569", "text-wrap": "wrap" },
    },
    {
      selector: "node[?sensitive]",
      style: { "border-style": "dashed", "border-color": "#6d28d9", "border-width": 2.5, "font-style": "italic" },
    },
    // At risk: a ring outside the node (its border stays free for the selection, a search match, sensitivity).
    {
      selector: "node[atRisk > 0]",
      style: {
        "outline-color": RISK_COLOR,
        "outline-style": "solid",
        "outline-width": "mapData(atRisk, 0, 1, 2, 4.5)",
        "outline-offset": 2,
        "outline-opacity": "mapData(atRisk, 0, 1, 0.55, 1)",
      },
    },
    {
      selector: "edge",
      style: large
        ? {
            "curve-style": "haystack",
            "haystack-radius": 0,
            width: 1,
            "line-color": "data(color)",
            opacity: 0.55,
          }
        : {
            "curve-style": "bezier",
            width: "mapData(confidence, 0, 1, 0.8, 2.6)",
            "line-color": "data(color)",
            "target-arrow-color": "data(color)",
            "target-arrow-shape": "data(arrow)",
            "arrow-scale": 0.8,
            opacity: 0.85,
          },
    },
    { selector: 'edge[status = "inferred"]', style: { "line-style": "dashed", "line-dash-pattern": [6, 3] } },
    // Known edges (the agent's declared links, links learned from use, a person's) are solid whatever their status.
    { selector: "edge[?known]", style: { "line-style": "solid" } },
    { selector: 'edge[status = "approved"]', style: { "line-style": "solid" } },
    { selector: 'edge[status = "rejected"]', style: { "line-style": "dotted", opacity: 0.25 } },
    { selector: 'edge[relation = "next_in_session"]', style: { width: 1, opacity: 0.45 } },
    { selector: 'edge[relation = "next_by_speaker"]', style: { width: 1, opacity: 0.7 } },
    {
      selector: "edge[?needsReview]",
      style: {
        width: 3,
        opacity: 1,
        "line-dash-pattern": [3, 3],
        "underlay-color": PROPOSAL_HALO,
        "underlay-opacity": 0.85,
        "underlay-padding": 3,
      },
    },
    { selector: "edge.quiet", style: { opacity: 0.07 } },
    { selector: "edge.faint", style: { opacity: 0.2 } },
    // Label fitting (label_fit.js) hides a label another, more important one overlaps; hover shows it in full.
    { selector: "node.nolabel", style: { "text-opacity": 0, "text-background-opacity": 0 } },
    {
      selector: "node.hover",
      style: { label: "data(fullLabel)", "text-opacity": 1, "text-background-opacity": 0.95, "text-wrap": "wrap", opacity: 1,
        "min-zoomed-font-size": 0, "z-index": 50 },
    },
    { selector: "node.labelled", style: { label: "data(label)" } },
    { selector: ".hidden", style: { display: "none" } },
    { selector: ".dimmed", style: { opacity: 0.12 } },
    {
      selector: "node.match",
      style: { "border-color": "#f59e0b", "border-width": 4, "border-style": "solid", "z-index": 20, opacity: 1 },
    },
    // The memory a neighbourhood view (?around=<id>) is centred on.
    { selector: "node.focus", style: { width: 44, height: 44, "border-color": "#111827", "border-width": 5, "border-style": "double",
      "z-index": 25 } },
    // The selected at-risk memory's way back to what changed: the edges it depends through, and that memory.
    {
      selector: "edge.risk-path",
      style: { "line-color": RISK_PATH_COLOR, "target-arrow-color": RISK_PATH_COLOR, "line-style": "solid", width: 4,
        opacity: 1, "underlay-color": "#fde68a", "underlay-opacity": 0.9, "underlay-padding": 3, "z-index": 29 },
    },
    {
      selector: "node:selected",
      style: { "border-color": "#111827", "border-width": 4, "border-style": "solid", "z-index": 30 },
    },
    {
      selector: "edge:selected",
      style: { "line-color": "#111827", "target-arrow-color": "#111827", width: 4, opacity: 1, "z-index": 30 },
    },
    { selector: "node.neighbour", style: { "border-color": "#111827", "border-width": 2.5 } },
    // (after the neighbours' border: the changed memory is often a neighbour of the selected one)
    { selector: "node.risk-source", style: { "border-color": RISK_PATH_COLOR, "border-width": 4, "border-style": "double",
      opacity: 1, "z-index": 29 } },
    {
      selector: "node.pulse",
      style: {
        "overlay-color": "#f59e0b",
        "overlay-opacity": 0.35,
        "overlay-padding": 14,
        "overlay-shape": "ellipse",
        "transition-property": "overlay-opacity, overlay-padding",
        "transition-duration": "0.5s",
      },
    },
    { selector: "edge.pulse", style: { "line-color": "#f59e0b", "target-arrow-color": "#f59e0b", width: 3, opacity: 1 } },
    {
      selector: "node.recalled",
      style: { "overlay-color": "#22c55e", "overlay-opacity": 0.3, "overlay-padding": 10, "overlay-shape": "ellipse" },
    },
    // A recall replayed (graph/replay.js): lit by activation, seeds ringed, what carried it drawn thick.
    { selector: ".replay-off", style: { opacity: 0.1 } },
    {
      selector: "node.replay-on",
      style: {
        opacity: 1,
        "overlay-color": REPLAY_COLOR,
        "overlay-opacity": "mapData(glow, 0, 1, 0.12, 0.5)",
        "overlay-padding": "mapData(glow, 0, 1, 5, 18)",
        "overlay-shape": "ellipse",
        "z-index": 15,
      },
    },
    { selector: "node.replay-seed", style: { "border-color": REPLAY_COLOR, "border-width": 4, "border-style": "double" } },
    { selector: "node.replay-now", style: { "overlay-color": "#f59e0b" } },
    { selector: "node.replay-ranked", style: { label: "data(rankLabel)", "font-weight": "bold", "font-size": 11 } },
    {
      selector: "edge.replay-carry",
      style: {
        opacity: 1,
        "line-color": REPLAY_COLOR,
        "target-arrow-color": REPLAY_COLOR,
        "line-style": "solid",
        width: "mapData(carry, 0, 1, 2, 8)",
        label: "data(carryLabel)",
        "font-size": 9,
        color: "#1e3a8a",
        "text-background-color": "#ffffff",
        "text-background-opacity": 0.85,
        "text-background-padding": 1,
        "z-index": 14,
      },
    },
    {
      selector: "node.ghost",
      style: { "background-opacity": 0.25, "border-style": "dashed", "border-color": "#64748b", "border-width": 2,
        label: "data(label)", color: "#475569", "font-style": "italic" },
    },
    { selector: "edge.ghost", style: { "line-style": "dotted", "line-color": "#64748b", "target-arrow-color": "#64748b" } },
    { selector: "node.cmp-entered", style: { "border-color": "#15803d", "border-width": 5, "border-style": "solid", opacity: 1 } },
    { selector: "node.cmp-left", style: { "border-color": "#b91c1c", "border-width": 5, "border-style": "dotted", opacity: 0.8 } },
    { selector: "node.cmp-moved", style: { "border-color": "#a16207", "border-width": 4, "border-style": "solid" } },
  ];
}
