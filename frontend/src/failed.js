// The Failed view: the session's interactions whose processing failed (status "failed", with its `error`) or
// that were kept without some of their stages (`stage_errors`, {stage: reason}: memory/engine/stages.py), why,
// and for curators a Retry button (POST …/interactions/<id>/retry/). The queue retries them too; the live
// change log (interaction.failed / .retried / .kept…) keeps the rows current.

import { fetchInteraction } from "./api.js";
import { fill, h, shorten } from "./dom.js";
import { formatDateTime, gettext, interpolate, ngettext } from "./i18n.js";

// In the order the write path runs them (engine/stages.py STAGES).
const STAGE_ORDER = ["dimensions", "scoring", "entities", "edges", "supersede"];
// What the visibility rule puts in place of content this reader may not see (memory/visibility.py).
const MASKS = new Set(["[sensitive]", "[not processed yet]", "[forgotten]"]);

/** A row of the view from a page-config row, a change's `after` snapshot or the API's answer. */
export function failedFrom(raw, previous = null) {
  const stageErrors = raw.stage_errors && typeof raw.stage_errors === "object" ? raw.stage_errors : {};
  const error = raw.error || "";
  return {
    id: raw.id,
    kind: raw.kind ?? (previous ? previous.kind : ""),
    content: raw.content ?? (previous ? previous.content : ""),
    status: raw.status,
    error,
    stageErrors,
    attempts: Number.isInteger(raw.attempts) ? raw.attempts : (previous ? previous.attempts : null),
    occurredAt: raw.occurred_at || (previous ? previous.occurredAt : null),
    time: Date.parse(raw.occurred_at || (previous ? previous.occurredAt : "") || "") || 0,
    // What the sidebar's search looks in (filters.interactionMatches reads content and reason).
    reason: [error, ...Object.values(stageErrors)].join(" "),
    version: previous ? previous.version : 0,
    resolved: false,
  };
}

/** Whether something of it failed: it is failed, or kept with failed stages. */
export function isFailing(row) {
  return row.status === "failed" || (row.status === "kept" && Object.keys(row.stageErrors).length > 0);
}

export class FailedTable {
  constructor(root, { config, filters, labels, curation = null, onChange = () => {} }) {
    Object.assign(this, { root, config, filters, labels, curation, onChange });
    this.rows = new Map();
    this.busy = new Set(); // interactions with a retry in flight
    this.notes = new Map(); // interaction id -> { text, tone: ok | info | error }: what the last retry answered
    for (const raw of config.interactions || []) {
      const row = failedFrom(raw);
      if (isFailing(row)) this.rows.set(row.id, row);
    }
  }

  /** How many interactions have something failed now (the tab's count). */
  get count() {
    let n = 0;
    for (const row of this.rows.values()) if (isFailing(row)) n += 1;
    return n;
  }

  /** Take the interaction changes of a live patch; true when a row came, changed or was resolved. A row
   *  that stops failing stays listed (resolved) until the page is reloaded, so people see what happened. */
  track(patch) {
    let changed = false;
    for (const change of patch.changes) {
      if (change.object_type !== "interaction" || !change.after) continue;
      const known = this.rows.get(change.object_id);
      if (known && change.id < known.version) continue;
      const row = failedFrom({ ...change.after, id: change.object_id }, known);
      row.version = change.id;
      if (!known && !isFailing(row)) continue;
      // The snapshot carries no attempt count, which a failure raises: read it from the API.
      if (change.op === "interaction.failed") this._refresh(row.id);
      row.resolved = !isFailing(row);
      if (row.resolved) this.busy.delete(row.id);
      this.rows.set(row.id, row);
      changed = true;
    }
    return changed;
  }

  /** The interaction as the API answered it (retry, or a read after a refused retry). */
  update(answer) {
    const known = this.rows.get(answer.id);
    const row = failedFrom(answer, known);
    row.resolved = !isFailing(row);
    this.rows.set(row.id, row);
    return row;
  }

  _refresh(id) {
    fetchInteraction(this.config, id).then((answer) => {
      if (!this.rows.has(id)) return;
      this.update(answer);
      this._changed();
    }).catch(() => {});
  }

  _changed() {
    this.onChange();
  }

  render() {
    const all = [...this.rows.values()].sort((a, b) => Number(a.resolved) - Number(b.resolved)
      || b.time - a.time || b.id - a.id);
    const shown = all.filter((row) => this.filters.interactionVisible(row));
    const failing = this.count;
    const outside = all.filter((row) => isFailing(row)).length - shown.filter((row) => isFailing(row)).length;
    const notes = [];
    if (failing) {
      notes.push(gettext("They are retried automatically, with back-off."));
      if (this.curation) notes.push(gettext("Retry runs again what failed, now."));
    } else if (all.length) {
      notes.push(gettext("Below: what was resolved since the page was opened."));
    }
    if (outside) {
      notes.push(interpolate(ngettext("%s more is outside the time range.", "%s more are outside the time range.",
        outside), [outside]));
    }
    fill(this.root,
      h("p", { class: `small${all.length ? "" : " failed-empty"}`, id: "failed-summary" },
        h("span", null, failing ? interpolate(ngettext("%s interaction failed or was kept without some of its stages.",
          "%s interactions failed or were kept without some of their stages.", failing), [failing])
          : gettext("No failed interactions.")),
        notes.map((note) => h("span", { class: "muted" }, note))),
      shown.length ? h("table", { class: "data-table", id: "failed-table" },
        h("thead", null, h("tr", null, ["#", gettext("Kind"), gettext("Content"), gettext("Status"),
          gettext("What failed"), gettext("Failed attempts"), gettext("Occurred"), this.curation ? "" : null]
          .filter((label) => label !== null).map((label, i) => h("th", { scope: "col", class: i === 5 ? "num" : null },
            label)))),
        h("tbody", null, shown.map((row) => this._row(row)))) : null);
  }

  _row(row) {
    const classes = [this.filters.interactionMatches(row) ? "match" : "", row.resolved ? "resolved" : "",
      `status-${row.status}`].filter(Boolean).join(" ");
    const masked = MASKS.has(row.content);
    return h("tr", { class: classes, dataset: { interactionId: row.id, status: row.status } },
      h("td", { class: "num" }, String(row.id)),
      h("td", { class: "small nowrap" }, this.labels.interactionKind(row.kind)),
      h("td", { class: "content-cell" }, masked ? h("em", { class: "muted" }, row.content) : shorten(row.content, 200)),
      h("td", { class: "small nowrap" }, this._status(row)),
      h("td", { class: "small failure-cell" }, this._failure(row)),
      h("td", { class: "num" }, row.attempts === null ? "–" : String(row.attempts)),
      h("td", { class: "small nowrap" }, formatDateTime(row.occurredAt)),
      this.curation ? h("td", { class: "retry-cell" }, this._action(row)) : null);
  }

  _status(row) {
    const label = this.labels.interactionStatus(row.status);
    if (row.resolved) return label;
    return h("span", { class: `pill ${row.status === "failed" ? "bad" : "warn"}`,
      title: row.status === "failed" ? gettext("Processing failed; nothing of it was kept yet")
        : gettext("Kept as a memory, without the stages listed") }, label);
  }

  _failure(row) {
    if (row.resolved) return h("span", { class: "resolved-note" }, gettext("Nothing failed any more."));
    if (row.status === "failed") {
      return h("div", null, h("strong", null, gettext("Processing failed:")), " ", reasonText(row.error));
    }
    const stages = Object.keys(row.stageErrors)
      .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    return h("div", null, h("strong", null, gettext("Kept without these stages:")),
      h("ul", { class: "stage-errors" }, stages.map((stage) => h("li", { dataset: { stage } },
        h("span", { class: "stage-name" }, interpolate(gettext("%s:"), [this.labels.stage(stage)])), " ",
        reasonText(row.stageErrors[stage])))));
  }

  _action(row) {
    const note = this.notes.get(row.id);
    const noteElement = note ? h("div", { class: `retry-note ${note.tone}`, role: "status" }, note.text) : null;
    if (row.resolved) return noteElement;
    const busy = this.busy.has(row.id);
    return [h("button", { type: "button", class: "btn btn-small", dataset: { retry: row.id }, disabled: busy,
      onclick: (event) => {
        event.stopPropagation();
        this.retry(row.id);
      } }, busy ? gettext("Retrying…") : gettext("Retry")), noteElement];
  }

  async retry(id) {
    if (this.busy.has(id) || !this.curation) return;
    this.busy.add(id);
    this.notes.delete(id);
    this.render();
    try {
      const row = this.update(await this.curation.client.retry(id));
      const note = this._answered(row);
      this.notes.set(id, note);
      this.curation.toast.show(note.text, { error: note.tone === "error" });
    } catch (error) {
      // 409: done meanwhile (by the queue or another person), nothing wrong: said plainly, and the row read again.
      const done = error.status === 409;
      const text = refusal(error);
      this.notes.set(id, { text, tone: done ? "info" : "error" });
      this.curation.toast.show(text, { error: !done });
      if (done) this._refresh(id);
    } finally {
      this.busy.delete(id);
      this._changed();
    }
  }

  _answered(row) {
    if (row.status === "failed") {
      return { text: interpolate(gettext("Retried #%(id)s: it failed again (%(error)s)."),
        { id: row.id, error: row.error || gettext("no reason recorded") }, true), tone: "error" };
    }
    const still = Object.keys(row.stageErrors).length;
    if (row.status === "kept" && still) {
      return { text: interpolate(ngettext("Retried #%(id)s: %(n)s stage still fails.",
        "Retried #%(id)s: %(n)s stages still fail.", still), { id: row.id, n: still }, true), tone: "error" };
    }
    return { text: interpolate(gettext("Retried #%(id)s: nothing failed this time (%(status)s)."),
      { id: row.id, status: this.labels.interactionStatus(row.status) }, true), tone: "ok" };
  }
}

/** A recorded reason, or what stands in for it when the visibility rule masked it with the interaction. */
function reasonText(reason) {
  if (MASKS.has(reason)) return h("em", { class: "muted" }, reason);
  return h("span", { class: "error-text" }, reason || gettext("no reason recorded"));
}

function rank(stage) {
  const i = STAGE_ORDER.indexOf(stage);
  return i < 0 ? STAGE_ORDER.length : i;
}

/** What a refused retry tells a person. */
function refusal(error) {
  if (error.status === 409) return gettext("Nothing of it failed any more, so there is nothing to retry.");
  if (error.status === 403) return gettext("You may not retry interactions in this project.");
  if (error.status === 404) return gettext("This interaction no longer exists.");
  return interpolate(gettext("The retry did not go through: %s"), [error.message]);
}
