// Small SVG pictures of a kind's node and a relation's edge, drawn as the graph draws them, so the
// sidebar's checkboxes are the legend: the same colour and the same shape or arrowhead.

import { kindColor, kindShape, relationArrow, relationColor } from "./style.js";

const SVG = "http://www.w3.org/2000/svg";

// Each node shape as points in a 12 × 12 box (the ellipse is drawn as a circle).
const SHAPE_POINTS = {
  star: "6,0.5 7.4,4.2 11.5,4.3 8.3,6.8 9.4,10.8 6,8.5 2.6,10.8 3.7,6.8 0.5,4.3 4.6,4.2",
  octagon: "3.6,0.5 8.4,0.5 11.5,3.6 11.5,8.4 8.4,11.5 3.6,11.5 0.5,8.4 0.5,3.6",
  rhomboid: "3,1 11.5,1 9,11 0.5,11",
  diamond: "6,0.5 11.5,6 6,11.5 0.5,6",
  hexagon: "3,1 9,1 11.5,6 9,11 3,11 0.5,6",
  triangle: "6,0.8 11.5,11 0.5,11",
  pentagon: "6,0.5 11.5,4.5 9.4,11.2 2.6,11.2 0.5,4.5",
  "cut-rectangle": "3,1 9,1 11.5,3.5 11.5,8.5 9,11 3,11 0.5,8.5 0.5,3.5",
};

function svg(tag, attrs) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  return element;
}

function picture(width, height, shapes) {
  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "glyph", "aria-hidden": "true" });
  root.append(...shapes);
  return root;
}

/** The node of a kind: its shape in its colour. */
export function kindGlyph(kind) {
  const shape = kindShape(kind);
  const paint = { fill: kindColor(kind), stroke: "#ffffff", "stroke-width": 0.8, "data-shape": shape };
  let mark;
  if (shape === "ellipse") mark = svg("circle", { cx: 6, cy: 6, r: 5.5, ...paint });
  else if (shape === "round-rectangle") mark = svg("rect", { x: 0.5, y: 1.5, width: 11, height: 9, rx: 2.5, ...paint });
  else mark = svg("polygon", { points: SHAPE_POINTS[shape] || SHAPE_POINTS.octagon, ...paint });
  return picture(12, 12, [mark]);
}

// Each arrowhead, drawn at the right end (x 22) of a 24 × 10 line, in the relation's colour.
function arrowHead(arrow, color) {
  const filled = { fill: color, stroke: color, "stroke-width": 1 };
  const open = { fill: "none", stroke: color, "stroke-width": 1.6 };
  switch (arrow) {
    case "triangle": return [svg("polygon", { points: "16,1.5 23,5 16,8.5", ...filled })];
    case "vee": return [svg("polygon", { points: "15,1 23,5 15,9 17.5,5", ...filled })];
    case "diamond": return [svg("polygon", { points: "15,5 19,1.5 23,5 19,8.5", ...filled })];
    case "circle": return [svg("circle", { cx: 19.5, cy: 5, r: 3.3, ...filled })];
    case "square": return [svg("rect", { x: 16.5, y: 2, width: 6, height: 6, ...filled })];
    case "chevron": return [svg("polyline", { points: "17,1.5 22,5 17,8.5", ...open })];
    case "tee": return [svg("line", { x1: 22, y1: 1, x2: 22, y2: 9, ...open })];
    case "triangle-tee": return [svg("polygon", { points: "15,1.5 21,5 15,8.5", ...filled }),
      svg("line", { x1: 23, y1: 1, x2: 23, y2: 9, ...open })];
    case "triangle-backcurve": return [svg("path", { d: "M15,1.5 L23,5 L15,8.5 Q18,5 15,1.5 Z", ...filled })];
    case "circle-triangle": return [svg("circle", { cx: 14.5, cy: 5, r: 2.3, ...filled }),
      svg("polygon", { points: "17.5,1.5 23,5 17.5,8.5", ...filled })];
    default: return [];
  }
}

/** The edge of a relation: a line in its colour ending in its arrowhead. */
export function relationGlyph(relation) {
  const color = relationColor(relation);
  const arrow = relationArrow(relation);
  const line = svg("line", { x1: 1, y1: 5, x2: arrow === "none" ? 23 : 17, y2: 5, stroke: color, "stroke-width": 2,
    "data-arrow": arrow });
  return picture(24, 10, [line, ...arrowHead(arrow, color)]);
}
