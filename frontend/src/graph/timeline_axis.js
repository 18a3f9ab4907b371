// The Timeline layout's frame, drawn over the graph in HTML: a time axis whose ticks follow pan and zoom,
// a label for each kind's lane, a line at "now" (the live edge, where new memories arrive), and a brush:
// drag across the axis to zoom to that stretch of time, double-click it to see everything again.

import { clear, h } from "../dom.js";
import { gettext } from "../i18n.js";
import { FIT_PADDING } from "./layouts.js";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const STEPS = [SECOND, 5 * SECOND, 15 * SECOND, 30 * SECOND, MINUTE, 5 * MINUTE, 15 * MINUTE, 30 * MINUTE, HOUR,
  3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY, 91 * DAY, 365 * DAY];
const MAX_TICKS = 8;
const BRUSH_MIN_PX = 8;

/** The tick spacing for a visible span: the finest step that keeps at most MAX_TICKS ticks in view. */
export function tickStep(visibleMs) {
  return STEPS.find((step) => visibleMs / step <= MAX_TICKS) || STEPS[STEPS.length - 1];
}

function tickLabel(time, step, language) {
  const date = new Date(time);
  if (step >= DAY) return date.toLocaleDateString(language, { month: "short", day: "numeric" });
  const options = step < MINUTE ? { hour: "2-digit", minute: "2-digit", second: "2-digit" }
    : { hour: "2-digit", minute: "2-digit" };
  return date.toLocaleTimeString(language, options);
}

export class TimelineAxis {
  /**
   * @param cy the Cytoscape instance
   * @param layouts the Layouts (its timeScale maps time to x, its lanes give each kind a row)
   * @param container the element over which the frame is drawn (the graph view)
   * @param kindLabel (kind) => the kind's display name
   */
  constructor(cy, layouts, container, kindLabel) {
    this.cy = cy;
    this.layouts = layouts;
    this.kindLabel = kindLabel;
    this.visible = false;
    this.frame = null;
    this.axis = h("div", { class: "timeline-axis", role: "slider", "aria-label": gettext("Time axis: drag to zoom") });
    this.lanes = h("div", { class: "timeline-lanes", "aria-hidden": "true" });
    this.now = h("div", { class: "timeline-now" }, h("span", null, gettext("now")));
    this.brush = h("div", { class: "timeline-brush", hidden: true });
    this.root = h("div", { class: "timeline-frame", hidden: true }, this.lanes, this.now, this.axis, this.brush);
    container.append(this.root);
    cy.on("viewport resize", () => this._soon());
    this.clock = null;
    this._wireBrush();
  }

  show(on) {
    this.visible = on;
    this.root.hidden = !on;
    clearInterval(this.clock);
    if (on) {
      this.clock = setInterval(() => this.render(), 10 * SECOND); // "now" moves on
      this.render();
    }
  }

  _soon() {
    if (!this.visible || this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      this.render();
    });
  }

  /** Rendered x of a time, and the time at a rendered x, through the layout's scale and the viewport. */
  _x(time) {
    const { min, span, width } = this.layouts.timeScale;
    return ((time - min) / span) * width * this.cy.zoom() + this.cy.pan().x;
  }

  _time(renderedX) {
    const { min, span, width } = this.layouts.timeScale;
    return min + ((renderedX - this.cy.pan().x) / this.cy.zoom() / width) * span;
  }

  render() {
    if (!this.visible || !this.layouts.timeScale) return;
    const language = document.documentElement.lang || "en";
    const width = this.cy.width();
    const start = this._time(0);
    const end = this._time(width);
    const step = tickStep(end - start);
    clear(this.axis);
    // Ticks on whole steps of local time (a day starts at local midnight).
    const offset = new Date(start).getTimezoneOffset() * MINUTE;
    for (let t = Math.ceil((start - offset) / step) * step + offset; t <= end; t += step) {
      const x = this._x(t);
      this.axis.append(h("span", { class: "tick", style: { left: `${x}px` }, dataset: { time: String(t) } },
        tickLabel(t, step, language)));
    }
    const nowX = this._x(Date.now());
    this.now.hidden = nowX < 0 || nowX > width;
    this.now.style.left = `${nowX}px`;
    clear(this.lanes);
    const { height, subRows } = this.layouts.laneGeometry;
    const zoom = this.cy.zoom();
    for (const [kind, index] of this.layouts.lanes || []) {
      const top = index * height * zoom + this.cy.pan().y - (height / subRows / 2) * zoom;
      this.lanes.append(h("div", { class: "lane", dataset: { kind }, style: { top: `${top}px`, height: `${height * zoom}px` } },
        h("span", null, this.kindLabel(kind))));
    }
  }

  _wireBrush() {
    let from = null;
    const box = () => this.root.getBoundingClientRect();
    this.axis.addEventListener("pointerdown", (event) => {
      from = event.clientX - box().left;
      this.axis.setPointerCapture(event.pointerId);
      Object.assign(this.brush.style, { left: `${from}px`, width: "0px" });
      this.brush.hidden = false;
    });
    this.axis.addEventListener("pointermove", (event) => {
      if (from === null) return;
      const x = event.clientX - box().left;
      Object.assign(this.brush.style, { left: `${Math.min(from, x)}px`, width: `${Math.abs(x - from)}px` });
    });
    this.axis.addEventListener("pointerup", (event) => {
      if (from === null) return;
      const to = event.clientX - box().left;
      this.brush.hidden = true;
      const [left, right] = [Math.min(from, to), Math.max(from, to)];
      from = null;
      if (right - left >= BRUSH_MIN_PX) this.zoomTo(left, right);
    });
    this.axis.addEventListener("dblclick", () => this.cy.animate({ fit: { padding: FIT_PADDING }, duration: 300 }));
  }

  /** Zoom so that the rendered stretch [left, right] fills the width; the vertical middle stays. */
  zoomTo(left, right) {
    const cy = this.cy;
    const zoom = Math.min(cy.maxZoom(), Math.max(cy.minZoom(), cy.zoom() * (cy.width() / (right - left))));
    const modelLeft = (left - cy.pan().x) / cy.zoom();
    const modelMiddle = (cy.height() / 2 - cy.pan().y) / cy.zoom();
    cy.animate({ zoom, pan: { x: -modelLeft * zoom, y: cy.height() / 2 - modelMiddle * zoom }, duration: 300 });
  }
}
