// Labels a person can read at the zoom they are shown at (issue 15): every label is drawn at LABEL_PX on
// screen whatever the zoom, below its node, or above it where a more important label takes the room below;
// where both are taken only the more important memory keeps its label (the others come back as you zoom in;
// hovering a node shows its full text). Small graphs only: large
// ones label just the nodes in view once zoomed in (GraphView.watchLabels).

export const LABEL_PX = 11;
const MAX_WIDTH_PX = 130;
const GAP_PX = 2;

function overlaps(a, b) {
  return a.x1 < b.x2 + GAP_PX && b.x1 < a.x2 + GAP_PX && a.y1 < b.y2 + GAP_PX && b.y1 < a.y2 + GAP_PX;
}

const pinned = (node) => node.selected() || node.hasClass("match") || node.hasClass("focus");
// An at-risk memory's ring (style.js: outline-offset 2 + outline-width 2 to 4.5, in graph units): its label keeps
// clear of it.
const ring = (node) => (node.data("atRisk") > 0 ? 4 + 2.5 * node.data("atRisk") : 0);

/** Size every label for the current zoom, then place each below its node, or above it where a more
 * important label already takes the room below, or hide it where both are taken. */
export function fitLabels(cy) {
  const zoom = cy.zoom();
  const nodes = cy.nodes().filter((n) => !n.hasClass("hidden") && n.data("label"));
  const margin = 3 / zoom;
  cy.batch(() => {
    nodes.style({ "font-size": LABEL_PX / zoom, "text-max-width": MAX_WIDTH_PX / zoom, "text-margin-y": margin,
      "text-valign": "bottom", "text-background-padding": 1 / zoom });
    nodes.filter((node) => ring(node) > 0).forEach((node) => { node.style("text-margin-y", margin + ring(node)); });
  });
  // Most important first, then the selected, matched and focused (a neighbourhood's centre) ones ahead of all:
  // they always keep theirs.
  const ranked = nodes.toArray().sort((a, b) => Number(pinned(b)) - Number(pinned(a))
    || (b.data("importance") - a.data("importance")) || ((a.data("mid") ?? a.data("gid")) - (b.data("mid") ?? b.data("gid"))));
  const kept = [];
  const hide = [];
  const above = [];
  const free = (box) => !kept.some((other) => overlaps(box, other));
  for (const node of ranked) {
    const box = node.boundingBox({ includeNodes: false, includeEdges: false, includeLabels: true });
    if (box.w <= 0 || pinned(node) || free(box)) {
      kept.push(box);
      continue;
    }
    const flipped = aboveNode(node, box);
    if (free(flipped)) {
      kept.push(flipped);
      above.push(node);
    } else hide.push(node);
  }
  cy.batch(() => {
    nodes.removeClass("nolabel");
    for (const node of hide) node.addClass("nolabel");
    for (const node of above) node.style({ "text-valign": "top", "text-margin-y": -(margin + ring(node)) });
  });
}

/** The label's box moved from below the node to above it, the same distance from its edge. */
function aboveNode(node, box) {
  const half = node.height() / 2;
  const gap = box.y1 - (node.position("y") + half);
  const y2 = node.position("y") - half - gap;
  return { x1: box.x1, x2: box.x2, y1: y2 - box.h, y2, w: box.w, h: box.h };
}
