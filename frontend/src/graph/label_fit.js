// Labels a person can read at the zoom they are shown at (issue 15): every label is drawn at LABEL_PX on
// screen whatever the zoom, and where two would overlap only the more important memory keeps its label
// (the others come back as you zoom in; hovering a node shows its full text). Small graphs only: large
// ones label just the nodes in view once zoomed in (GraphView.watchLabels).

export const LABEL_PX = 11;
const MAX_WIDTH_PX = 130;
const GAP_PX = 2;

function overlaps(a, b) {
  return a.x1 < b.x2 + GAP_PX && b.x1 < a.x2 + GAP_PX && a.y1 < b.y2 + GAP_PX && b.y1 < a.y2 + GAP_PX;
}

const pinned = (node) => node.selected() || node.hasClass("match") || node.hasClass("focus");

/** Size every label for the current zoom, then hide the ones a more important label overlaps. */
export function fitLabels(cy) {
  const zoom = cy.zoom();
  const nodes = cy.nodes().filter((n) => !n.hasClass("hidden") && n.data("label"));
  cy.batch(() => {
    nodes.style({ "font-size": LABEL_PX / zoom, "text-max-width": MAX_WIDTH_PX / zoom, "text-margin-y": 3 / zoom,
      "text-background-padding": 1 / zoom });
  });
  // Most important first, then the selected, matched and focused (a neighbourhood's centre) ones ahead of all:
  // they always keep theirs.
  const ranked = nodes.toArray().sort((a, b) => Number(pinned(b)) - Number(pinned(a))
    || (b.data("importance") - a.data("importance")) || (a.data("mid") - b.data("mid")));
  const kept = [];
  const hide = [];
  for (const node of ranked) {
    const box = node.boundingBox({ includeNodes: false, includeEdges: false, includeLabels: true });
    const clash = box.w > 0 && kept.some((other) => overlaps(box, other));
    if (clash && !pinned(node)) hide.push(node);
    else kept.push(box);
  }
  cy.batch(() => {
    nodes.removeClass("nolabel");
    for (const node of hide) node.addClass("nolabel");
  });
}
