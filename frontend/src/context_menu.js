// A small menu at the pointer (the graph's right-click): buttons with role=menuitem, arrow keys move between
// them, Escape, a click elsewhere, scrolling or a resize close it.

import { clear, h } from "./dom.js";

export class ContextMenu {
  constructor(parent) {
    this.root = h("div", { class: "context-menu", role: "menu", id: "context-menu", hidden: true });
    parent.append(this.root);
    const close = (event) => {
      if (!this.root.hidden && !(event && event.target instanceof Node && this.root.contains(event.target))) this.hide();
    };
    document.addEventListener("pointerdown", close, true);
    window.addEventListener("resize", () => this.hide());
    document.addEventListener("wheel", close, { capture: true, passive: true });
    this.root.addEventListener("keydown", (event) => this._key(event));
  }

  /** Show the items ({label, run, danger, disabled}) with the menu's corner at (x, y) in the parent. */
  show(x, y, title, items) {
    const buttons = items.map((item) => h("button", {
      type: "button", role: "menuitem", class: item.danger ? "danger" : "", disabled: item.disabled,
      onclick: () => {
        this.hide();
        item.run();
      },
    }, item.label));
    clear(this.root).append(h("div", { class: "context-title" }, title), ...buttons);
    this.root.hidden = false;
    const parent = this.root.parentElement.getBoundingClientRect();
    const box = this.root.getBoundingClientRect();
    this.root.style.left = `${Math.max(4, Math.min(x, parent.width - box.width - 4))}px`;
    this.root.style.top = `${Math.max(4, Math.min(y, parent.height - box.height - 4))}px`;
    const first = buttons.find((b) => !b.disabled);
    if (first) first.focus();
  }

  hide() {
    this.root.hidden = true;
  }

  _key(event) {
    const items = [...this.root.querySelectorAll("button:not([disabled])")];
    const at = items.indexOf(document.activeElement);
    if (event.key === "Escape") {
      event.stopPropagation();
      this.hide();
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const next = (at + (event.key === "ArrowDown" ? 1 : -1) + items.length) % items.length;
      items[next].focus();
    }
  }
}
