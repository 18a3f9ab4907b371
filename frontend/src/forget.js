// The forget page (admins): a filter → a dry run's counts and sample → the slug typed to confirm → the job's
// progress and the audit trail, both from the page's socket (ws/projects/<slug>/forget/), which sends the
// project's latest jobs whenever one changes.

import { sendJson } from "./api.js";
import { $, clear, fill, h, shorten } from "./dom.js";
import { formatDateTime, gettext, interpolate, ngettext } from "./i18n.js";
import { socketUrl } from "./live.js";

const RECONNECT_MS = 2000;

function countLabels() {
  return {
    memories: gettext("memories selected"), merged_duplicates: gettext("duplicates merged into them"),
    deleted: gettext("memories deleted"), edges: gettext("edges deleted"), mentions: gettext("entity mentions deleted"),
    embeddings: gettext("embeddings deleted"), entities: gettext("entities deleted (no one else names them)"),
    interactions_redacted: gettext("interactions emptied"), traces_scrubbed: gettext("recall traces rewritten"),
    changes_scrubbed: gettext("change-log rows rewritten"), summaries_rewritten: gettext("summaries rewritten"),
    summaries_deleted: gettext("summaries deleted"), notes_scrubbed: gettext("curators' reasons rewritten"),
    sessions_deleted: gettext("sessions deleted whole"), interactions_deleted: gettext("interactions deleted"),
    traces_deleted: gettext("recall traces deleted"), store_items_deleted: gettext("store items deleted"),
  };
}

// Interactions by status, as the dry run counts them ({kept, filtered, failed, pending}); "" when none.
function byStatus(label, counts) {
  const n = (key) => (counts && counts[key]) || 0;
  if (!["kept", "filtered", "failed", "pending"].some((key) => n(key))) return "";
  return interpolate(label, { kept: n("kept"), filtered: n("filtered"), failed: n("failed"), pending: n("pending") }, true);
}

function stateLabel(job) {
  const labels = {
    queued: gettext("waiting"), running: gettext("running"), done: gettext("done"), failed: gettext("failed"),
    selecting: gettext("selecting"), forgetting: gettext("forgetting"), vacuuming: gettext("vacuuming the tables"),
    verifying: gettext("scanning for residues"),
  };
  return job.state === "running" ? labels[job.phase] || labels.running : labels[job.state] || job.state;
}

function filterText(filter) {
  const parts = [];
  if (filter.session_ids && filter.session_ids.length) {
    parts.push(interpolate(gettext("sessions %s"), [filter.session_ids.map((id) => `#${id}`).join(", ")]));
  }
  if (filter.memory_ids && filter.memory_ids.length) parts.push(interpolate(gettext("%s memory ids"), [filter.memory_ids.length]));
  if (filter.after) parts.push(interpolate(gettext("from %s"), [formatDateTime(filter.after)]));
  if (filter.before) parts.push(interpolate(gettext("before %s"), [formatDateTime(filter.before)]));
  if (filter.text_contains) parts.push(interpolate(gettext("text %s"), [filter.text_contains]));
  if (filter.entity) parts.push(interpolate(gettext("entity %s"), [filter.entity]));
  if (filter.kinds && filter.kinds.length) parts.push(filter.kinds.join(", "));
  if (filter.sensitive_only) parts.push(gettext("sensitive only"));
  return parts.join(" · ") || "–";
}

function verificationCell(job) {
  if (job.mode !== "hard") return h("span", { class: "muted" }, gettext("not needed: the text is kept"));
  if (!job.verification) return h("span", { class: "muted" }, "–");
  const residues = job.verification.residues;
  const scanned = interpolate(gettext("%(strings)s strings in %(tables)s tables"),
    { strings: job.verification.strings, tables: job.verification.tables }, true);
  if (!residues.length) return h("span", { class: "ok-text" }, gettext("0 residues"), h("br"), h("small", { class: "muted" }, scanned));
  return h("details", null,
    h("summary", { class: "bad-text" }, interpolate(ngettext("%s residue", "%s residues", residues.length), [residues.length])),
    h("ul", { class: "small" }, ...residues.map((r) => h("li", null, h("code", null, `${r.table}.${r.column}`), ` #${r.row}`))),
    h("small", { class: "muted" }, scanned));
}

function changedCell(job) {
  if (job.state === "failed") return h("span", { class: "bad-text" }, job.error);
  const counts = job.counts || {};
  const labels = job.mode === "hard"
    ? { sessions_deleted: gettext("sessions"), deleted: gettext("memories"), interactions_deleted: gettext("interactions"),
      edges: gettext("edges"), entities: gettext("entities"), traces_scrubbed: gettext("recall traces") }
    : { memories: gettext("memories") };
  const parts = Object.keys(labels).filter((k) => k in counts).map((k) => `${labels[k]} ${counts[k]}`);
  return h("span", { class: "small" }, parts.join(" · ") || "–");
}

class ForgetPage {
  constructor(config) {
    this.config = config;
    this.preview = null;
    this.watching = null;  // the id of the job this page started
  }

  start() {
    $("#forget-filter").addEventListener("submit", (event) => { event.preventDefault(); this.dryRun(); });
    $("#forget-filter").addEventListener("input", () => this.invalidate());
    $("#f-confirm").addEventListener("input", () => this.confirmState());
    $("#forget-confirm").addEventListener("submit", (event) => { event.preventDefault(); this.run(); });
    this.renderJobs(this.config.jobs);
    this.connect();
    document.documentElement.dataset.forgetReady = "1";
  }

  filter() {
    const moment = (id) => ($(id).value ? new Date($(id).value).toISOString() : null);
    return {
      session_ids: [...$("#f-sessions").selectedOptions].map((o) => Number(o.value)),
      after: moment("#f-after"), before: moment("#f-before"),
      text_contains: $("#f-text").value.trim(), entity: $("#f-entity").value.trim(),
      kinds: [...document.querySelectorAll("input[name=kind]:checked")].map((input) => input.value),
      sensitive_only: $("#f-sensitive").checked,
      mode: document.querySelector("input[name=mode]:checked").value,
    };
  }

  invalidate() {
    if (!this.preview) return;
    this.preview = null;
    $("#preview").hidden = true;
    $("#dry-run-status").textContent = gettext("The filter changed: run the dry run again.");
  }

  async dryRun() {
    const status = $("#dry-run-status");
    status.textContent = gettext("Counting…");
    const body = this.filter();
    try {
      const preview = await sendJson("POST", this.config.urls.preview, body);
      this.preview = { body, preview };
      status.textContent = "";
      this.renderPreview(preview);
    } catch (error) {
      this.preview = null;
      $("#preview").hidden = true;
      status.textContent = error.message;
    }
  }

  renderPreview(preview) {
    const hard = preview.mode === "hard";
    $("#preview-summary").textContent = interpolate(hard
      ? ngettext("%s memory would be deleted for good, with everything derived from it:",
        "%s memories would be deleted for good, with everything derived from them:", preview.memories)
      : ngettext("%s memory would be hidden (its text is kept):", "%s memories would be hidden (their text is kept):",
        preview.memories), [preview.memories]);
    const labels = countLabels();
    fill($("#preview-counts"), ...Object.keys(labels).filter((key) => key in preview.counts)
      .map((key) => h("div", { class: "forget-count", "data-count": key },
        h("b", null, String(preview.counts[key])), h("span", null, labels[key]))));
    this.renderSessionsAndInteractions(preview);
    fill($("#preview-sample"), ...preview.sample.map((m) => h("li", null,
      h("span", { class: "muted small" },
        `#${m.id} · ${this.config.kinds[m.kind] || m.kind} · ${m.session} · ${formatDateTime(m.occurred_at)} `),
      shorten(m.content, 160))));
    if (!preview.sample.length) $("#preview-sample").append(h("li", { class: "muted" }, gettext("Nothing matches this filter.")));
    $("#f-confirm").value = "";
    this.confirmState();
    $("#preview").hidden = false;
  }

  // The sessions a hard forget deletes whole (its filter names sessions and nothing else), and the
  // interactions it deletes or empties, by status: what goes besides the memories.
  renderSessionsAndInteractions(preview) {
    const sessions = preview.deleted_sessions || [];
    const box = $("#preview-sessions");
    box.hidden = !sessions.length;
    fill(box, ...(sessions.length ? [
      h("p", null, ngettext("This session goes for good, with every interaction it holds (kept, filtered, failed or waiting):",
        "These sessions go for good, with every interaction they hold (kept, filtered, failed or waiting):", sessions.length)),
      h("ul", { class: "forget-sessions" }, ...sessions.map((s) => h("li", { "data-session": String(s.id) },
        h("b", null, `#${s.id} ${s.name}`), " ",
        h("span", { class: "muted small" }, interpolate(gettext("memories %(memories)s · interactions %(interactions)s"),
          { memories: s.memories, interactions: s.interactions }, true))))),
    ] : []));
    const counts = preview.interactions || {};
    const lines = [
      byStatus(gettext("Interactions deleted: %(kept)s kept, %(filtered)s filtered, %(failed)s failed, %(pending)s waiting"), counts.deleted),
      byStatus(gettext("Interactions emptied: %(kept)s kept, %(filtered)s filtered, %(failed)s failed, %(pending)s waiting"), counts.emptied),
    ].filter(Boolean);
    const text = $("#preview-interactions");
    text.hidden = !lines.length;
    fill(text, ...lines.flatMap((line, i) => (i ? [h("br"), line] : [line])));
  }

  confirmState() {
    const button = $("#forget-start");
    const count = this.preview ? this.preview.preview.memories : 0;
    const sessions = this.preview ? (this.preview.preview.deleted_sessions || []).length : 0;
    button.textContent = sessions
      ? interpolate(ngettext("Delete %s session for good", "Delete %s sessions for good", sessions), [sessions])
        + (count ? ` (${interpolate(ngettext("%s memory", "%s memories", count), [count])})` : "")
      : interpolate(ngettext("Forget %s memory", "Forget %s memories", count), [count]);
    button.disabled = !this.preview || !(count || sessions) || $("#f-confirm").value.trim() !== this.config.projectSlug;
  }

  async run() {
    if (!this.preview) return;
    const button = $("#forget-start");
    button.disabled = true;
    try {
      const job = await sendJson("POST", this.config.urls.jobs, {
        ...this.preview.body, confirm: $("#f-confirm").value.trim(), expect_memories: this.preview.preview.memories,
      });
      this.watching = job.id;
      this.preview = null;
      $("#preview").hidden = true;
      clear($("#preview-sample"));  // the forgotten text leaves the page too
      clear($("#preview-sessions"));
      $("#forget-filter").reset();
      this.renderProgress(job);
    } catch (error) {
      $("#dry-run-status").textContent = error.message;
      this.confirmState();
    }
  }

  connect() {
    const socket = new WebSocket(socketUrl(this.config.urls.socket));
    socket.addEventListener("open", () => { $("#socket-state").textContent = gettext("Live: updates as jobs run."); });
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(event.data);
      if (message.type === "jobs") this.renderJobs(message.jobs);
    });
    socket.addEventListener("close", (event) => {
      if (event.code === 4403 || event.code === 4404) {
        $("#socket-state").textContent = gettext("You may no longer forget in this project: reload the page.");
        return;
      }
      $("#socket-state").textContent = gettext("Connection lost; reconnecting…");
      setTimeout(() => this.connect(), RECONNECT_MS);
    });
  }

  renderJobs(jobs) {
    const active = jobs.find((job) => job.id === this.watching) || jobs.find((job) => job.state === "queued" || job.state === "running");
    if (active) this.renderProgress(active);
    const rows = jobs.map((job) => h("tr", { "data-job": String(job.id), "data-state": job.state },
      h("td", null, String(job.id)),
      h("td", { class: "small nowrap" }, formatDateTime(job.created_at)),
      h("td", { class: "small" }, job.actor_name),
      h("td", { class: "small" }, job.mode === "hard" ? gettext("deleted for good") : gettext("hidden")),
      h("td", { class: "small" }, filterText(job.filter)),
      h("td", { class: "small" }, stateLabel(job)),
      h("td", null, changedCell(job)),
      h("td", { class: "small" }, verificationCell(job))));
    const body = $("#jobs-table tbody");
    if (rows.length) fill(body, ...rows);
    else fill(body, h("tr", null, h("td", { colspan: "8", class: "empty" }, gettext("Nothing has been forgotten in this project."))));
  }

  renderProgress(job) {
    $("#progress").hidden = false;
    const bar = $("#progress-bar");
    const ended = job.state === "done" || job.state === "failed";
    bar.max = Math.max(job.total, 1);
    bar.value = ended ? bar.max : job.done;
    const text = $("#progress-text");
    clear(text);
    if (job.state === "done") {
      const residues = job.residues === null ? "" : " " + interpolate(
        ngettext("The scan found %s residue.", "The scan found %s residues.", job.residues), [job.residues]);
      const deleted = (job.counts || {}).sessions_deleted || 0;
      const sessions = deleted ? " " + interpolate(
        ngettext("%s session deleted.", "%s sessions deleted.", deleted), [deleted]) : "";
      text.textContent = interpolate(ngettext("Job #%(id)s is done: %(count)s memory forgotten.",
        "Job #%(id)s is done: %(count)s memories forgotten.", job.total), { id: job.id, count: job.total }, true)
        + sessions + residues;
    } else if (job.state === "failed") {
      const forgot = Object.keys(job.counts || {}).length > 0;
      text.textContent = interpolate(forgot
        ? gettext("Job #%(id)s forgot the memories, then failed: %(error)s")
        : gettext("Job #%(id)s failed, nothing was forgotten: %(error)s"), { id: job.id, error: job.error }, true);
    } else {
      text.textContent = interpolate(gettext("Job #%(id)s: %(phase)s, %(done)s of %(total)s"),
        { id: job.id, phase: stateLabel(job), done: job.done, total: job.total }, true);
    }
    document.documentElement.dataset.forgetJob = `${job.id}:${job.state}`;
  }
}

const config = JSON.parse($("#cw-config").textContent);
new ForgetPage(config).start();
