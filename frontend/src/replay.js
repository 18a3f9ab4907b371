// Recall replay on the session page: run a recall or open a stored one, step through its seeds and hops on
// the graph, see why each memory ranked, read the context it told, and compare two recalls (or re-run one
// on the graph as it is now). The server masks what this reader may not see; this module shows what it got.

import { fetchComparison, fetchRecall, fetchRecalls, rerunRecall, runRecall } from "./api.js";
import { fill, h, shorten } from "./dom.js";
import { formatDateTime, formatNumber, gettext, interpolate, ngettext } from "./i18n.js";
import { ReplayPainter, stepCount } from "./graph/replay.js";

const PAGE = 20;
const PLAY_MS = 1200;
const PRESETS = ["ripple", "hybrid", "vector"];
// The question's shape multiplied the activation of the memories holding what it asks for (recall/shaped.py),
// or, for "why", what reached the speaker's earlier turn (recall/ripple.py); a memory that is itself a question,
// holds a word or two, or is of a kind the recall weighs (a tool call) was weighed down (recall/rank.py): each
// factor a ranking entry's components may carry, with its chip and its sentence in the Why panel.
const BOOSTS = () => [
  { key: "time_boost", chip: gettext("says when ×%s"),
    why: gettext("The question asks when, and this memory states a date or time: its activation was multiplied by %s before ranking.") },
  { key: "amount_boost", chip: gettext("states an amount ×%s"),
    why: gettext("The question asks how much or how many, and this memory states an amount or a number: its activation was multiplied by %s before ranking.") },
  { key: "cause_boost", chip: gettext("told before, asked why ×%s"),
    why: gettext("The question asks why, and the same speaker said this before a turn that matched it: the activation it got back along that link was multiplied by %s, up to just below that turn's own.") },
  { key: "question_weight", chip: gettext("asks, does not tell ×%s"),
    why: gettext("This memory is itself a question and holds no answer: its activation was multiplied by %s before ranking. It still passed its whole activation on along its links, to the turn that answered it.") },
  { key: "short_memory_weight", chip: gettext("a word or two ×%s"),
    why: gettext("This memory holds only a word or two: it matches a question on a word and tells little, so its activation was multiplied by %s before ranking.") },
  { key: "kind_weight", chip: gettext("by its kind ×%s"),
    why: gettext("The recall weighs memories of this kind by %s before ranking (kind_weights): a tool call names what the question names, while its result, linked to it, tells what happened.") },
];
const boostChips = (components) => BOOSTS().filter((b) => components[b.key]).map((b) =>
  h("span", { class: "chip", title: interpolate(b.why, [formatNumber(components[b.key], 1)]) },
    interpolate(b.chip, [formatNumber(components[b.key], 1)])));
const boostSentences = (components) => BOOSTS().filter((b) => components[b.key]).map((b) =>
  h("p", { class: "muted small" }, interpolate(b.why, [formatNumber(components[b.key], 1)])));
const SOURCE_NAMES = () => ({ vector: gettext("vector"), lexical: gettext("full-text"), entities: gettext("entity") });

function sourcesText(sources) {
  const names = SOURCE_NAMES();
  return Object.entries(sources || {}).sort((a, b) => a[1] - b[1])
    .map(([source, rank]) => interpolate(gettext("%(source)s rank %(rank)s"), { source: names[source] || source, rank }, true))
    .join(", ");
}

/** "causal (declared by the agent)": a relation with where its edge came from, when the page holds the edge. */
export function relationText(relation, edgeIdValue, labels, originOf = () => null) {
  const origin = edgeIdValue ? originOf(edgeIdValue) : null;
  return origin ? interpolate(gettext("%(relation)s (%(origin)s)"), { relation: labels.relation(relation), origin: labels.origin(origin) }, true)
    : labels.relation(relation);
}

/** "seed #31 (full-text rank 1) → causal (rule) 0.42 → #40": how activation reached a ranked memory. */
export function pathText(entry, replay, labels, originOf = () => null) {
  const path = entry.path || [];
  if (!path.length) return "";
  if (path[0].seed) return interpolate(gettext("seed (%s)"), [sourcesText(path[0].sources)]);
  const seed = replay.seeds.find((s) => s.memory_id === path[0].from);
  const parts = [interpolate(gettext("seed #%(id)s (%(sources)s)"), { id: path[0].from, sources: seed ? sourcesText(seed.sources) : "?" }, true)];
  for (const step of path) {
    parts.push(`${relationText(step.relation, step.edge_id, labels, originOf)} ${formatNumber(step.activation)}`, `#${step.to}`);
  }
  return parts.join(" → ");
}

/** Click and keyboard (Enter, Space) for a row-like element that selects a memory. */
function pickable(action) {
  return { tabindex: 0, role: "button", onclick: action, onkeydown: (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      action();
    }
  } };
}

export class RecallDrawer {
  constructor(root, { config, view, labels, onSelect, onClose }) {
    Object.assign(this, { root, config, view, labels, onSelect, onClose });
    this.painter = new ReplayPainter(view, config.sessionId);
    this.replay = null;
    this.comparison = null;
    this.step = 0;
    this.timer = null;
    this.compareFrom = null;
    this.focusId = null;
    this.list = { results: [], count: 0, q: "" };
    // Where an edge that carried activation came from (known: the agent's, from use, a person's; or guessed), for
    // the edges this page holds: the trace keeps ids and relations only.
    this.originOf = (edgeIdValue) => ((view.model && view.model.edges.get(edgeIdValue)) || {}).origin || null;
  }

  _relation(relation, edgeIdValue) {
    return relationText(relation, edgeIdValue, this.labels, this.originOf);
  }

  get isOpen() { return !this.root.hidden; }

  /** Show the drawer (empty) and load the stored list; resolves when the list is in. */
  open() {
    this.root.hidden = false;
    document.body.classList.add("replay-open");
    this.view.resize();
    this._render();
    return this.loadList();
  }

  close() {
    this._stopPlay();
    this.painter.stop();
    this.replay = null;
    this.comparison = null;
    this.root.hidden = true;
    document.body.classList.remove("replay-open");
    document.documentElement.dataset.replayStep = "";
    this.view.resize();
    if (this.onClose) this.onClose();
  }

  toggle() { return this.isOpen ? this.close() : this.open(); }

  async loadList({ more = false } = {}) {
    const params = { session: this.config.sessionId, limit: PAGE, offset: more ? this.list.results.length : 0 };
    if (this.list.q) params.q = this.list.q;
    try {
      const page = await fetchRecalls(this.config, params);
      this.list = { ...this.list, count: page.count, results: more ? [...this.list.results, ...page.results] : page.results };
    } catch (error) {
      this.list.error = error.message;
    }
    this._renderList();
  }

  async openRecall(recallId) {
    this._stopPlay();
    const fetching = fetchRecall(this.config, recallId);
    if (!this.isOpen) this.open(); // the stored list loads beside the trace, not before it
    this._status(gettext("Loading the recall…"));
    let replay;
    try {
      replay = await fetching;
    } catch (error) {
      this._status(interpolate(gettext("Could not open recall #%(id)s: %(error)s"), { id: recallId, error: error.message }, true), true);
      return;
    }
    this.comparison = null;
    this._show(replay);
    this._status("");
    this.goTo(stepCount(replay) - 1);
    this.painter.fit();
  }

  _show(replay) {
    this.replay = replay;
    this.focusId = null;
    this.painter.start(replay);
    this._renderMain();
    this._renderList();
  }

  goTo(step) {
    if (!this.replay) return;
    const last = stepCount(this.replay) - 1;
    this.step = Math.max(0, Math.min(last, step));
    this.painter.show(this.step);
    if (this.comparison) this.painter.markComparison(this.comparison.diff);
    document.documentElement.dataset.replayStep = String(this.step);
    const slider = this.root.querySelector("#replay-step");
    if (slider) slider.value = String(this.step);
    const label = this.root.querySelector("#replay-step-label");
    if (label) label.textContent = this._stepName(this.step);
    if (this.focusId === null) this._renderWhy();
  }

  /** The graph changed live under an open replay: paint the step again (new nodes dimmed like the rest). */
  repaint() {
    if (this.replay) this.goTo(this.step);
  }

  play() {
    if (this.timer) return this._stopPlay();
    if (this.step >= stepCount(this.replay) - 1) this.goTo(0);
    this._playButton(true);
    this.timer = setInterval(() => {
      if (this.step >= stepCount(this.replay) - 1) return this._stopPlay();
      this.goTo(this.step + 1);
      return null;
    }, PLAY_MS);
  }

  /** A memory selected on the graph or in a table: its row, and why it is there. */
  focus(memoryId) {
    if (!this.replay) return;
    this.focusId = memoryId;
    for (const row of this.root.querySelectorAll("tr.selected")) row.classList.remove("selected");
    const row = this.root.querySelector(`tr[data-memory-id="${memoryId}"]`);
    if (row) row.classList.add("selected");
    this._renderWhy();
  }

  async compareWith(otherId) {
    const first = this.compareFrom;
    this.compareFrom = null;
    await this._comparison(() => fetchComparison(this.config, first, otherId));
  }

  async rerun() {
    await this._comparison(() => rerunRecall(this.config, this.replay.id));
    await this.loadList();
  }

  async _comparison(fetcher) {
    this._status(gettext("Comparing…"));
    try {
      const comparison = await fetcher();
      this.comparison = comparison;
      this._show(comparison.second);
      this._status("");
      this.goTo(stepCount(comparison.second) - 1);
      this.painter.fit();
    } catch (error) {
      this._status(interpolate(gettext("Could not compare: %s"), [error.message]), true);
    }
  }

  async _run(form) {
    const data = new FormData(form);
    const query = String(data.get("query") || "").trim();
    if (!query) {
      this._status(gettext("Type what to recall first."), true);
      return;
    }
    const preset = String(data.get("preset"));
    const params = { decay: Number(data.get("decay")) };
    if (preset === "ripple") params.max_hops = Number(data.get("hops"));
    const body = { query, k: Number(data.get("k")), preset, params,
      session_id: data.get("scope") === "session" ? this.config.sessionId : null };
    this._status(gettext("Recalling…"));
    try {
      const answer = await runRecall(this.config, body);
      await this.loadList();
      await this.openRecall(answer.recall_id);
    } catch (error) {
      this._status(interpolate(gettext("The recall failed: %s"), [error.message]), true);
    }
  }

  _stopPlay() {
    clearInterval(this.timer);
    this.timer = null;
    this._playButton(false);
  }

  _playButton(playing) {
    const button = this.root.querySelector("#replay-play");
    if (button) {
      button.textContent = playing ? gettext("Pause") : gettext("Play");
      button.setAttribute("aria-pressed", String(playing));
    }
  }

  _stepName(step) {
    const last = stepCount(this.replay) - 1;
    if (step === 0) return interpolate(ngettext("Step 0: %s seed", "Step 0: %s seeds", this.replay.seeds.length), [this.replay.seeds.length]);
    if (step === last) return interpolate(gettext("Step %(step)s: the ranking (%(n)s memories)"), { step, n: this.replay.ranking.length }, true);
    const arrivals = (this.replay.steps.find((s) => s.hop === step) || { arrivals: [] }).arrivals;
    const reached = new Set(arrivals.map((a) => a.memory_id)).size;
    return interpolate(gettext("Step %(step)s: hop %(step)s reached %(n)s memories"), { step, n: reached }, true);
  }

  _status(text, error = false) {
    const status = this.root.querySelector("#replay-status");
    if (!status) return;
    status.textContent = text || "";
    status.classList.toggle("error", error);
  }

  // --- rendering ---------------------------------------------------------------------------------

  _render() {
    fill(this.root, 
      h("div", { class: "replay-side" },
        h("div", { class: "replay-title" }, h("h2", null, gettext("Recalls")),
          h("button", { type: "button", class: "icon-btn", id: "replay-close", title: gettext("Close the replay"),
            "aria-label": gettext("Close the replay"), onclick: () => this.close() }, "×")),
        this._form(),
        h("p", { class: "small", id: "replay-status", role: "status" }),
        h("div", { id: "replay-list" })),
      h("div", { class: "replay-main", id: "replay-main" }),
      h("div", { class: "replay-why", id: "replay-why" }));
    this._renderMain();
  }

  _form() {
    const number = (name, label, value, min, max, step) => h("label", null, label,
      h("input", { type: "number", name, value, min, max, step, required: true }));
    return h("form", { class: "replay-form", id: "replay-form", onsubmit: (event) => {
      event.preventDefault();
      this._run(event.target);
    } },
    h("input", { type: "search", name: "query", id: "replay-query", placeholder: gettext("What should the agent remember?"),
      "aria-label": gettext("Recall query"), maxlength: 4000 }),
    h("div", { class: "replay-params two" },
      h("label", null, gettext("Scope"), h("select", { name: "scope" },
        h("option", { value: "session" }, gettext("This session")), h("option", { value: "project" }, gettext("Whole project")))),
      h("label", null, gettext("Preset"), h("select", { name: "preset" }, PRESETS.map((p) => h("option", { value: p }, p))))),
    h("div", { class: "replay-params" },
      number("hops", gettext("Hops"), 2, 0, 3, 1),
      number("decay", gettext("Decay"), 0.8, 0.05, 1, 0.05),
      number("k", gettext("k"), 8, 1, 100, 1)),
    h("button", { type: "submit", class: "btn primary btn-small", id: "replay-run" }, gettext("Recall and replay")));
  }

  _renderList() {
    const root = this.root.querySelector("#replay-list");
    if (!root) return;
    const search = h("input", { type: "search", id: "replay-search", value: this.list.q, placeholder: gettext("Search stored recalls"),
      "aria-label": gettext("Search stored recalls"), onchange: (event) => {
        this.list.q = event.target.value.trim();
        this.loadList();
      } });
    const rows = this.list.results.map((recall) => {
      const open = this.replay && this.replay.id === recall.id;
      const query = recall.query_hidden ? h("em", { class: "masked" }, gettext("query hidden from you")) : shorten(recall.query, 70);
      return h("li", { class: `recall-row${open ? " open" : ""}`, dataset: { recallId: recall.id } },
        h("button", { type: "button", class: "link recall-open", onclick: () => (this.compareFrom && this.compareFrom !== recall.id
          ? this.compareWith(recall.id) : this.openRecall(recall.id)) }, query),
        h("span", { class: "muted small" }, `#${recall.id} · ${recall.preset} · ${formatDateTime(recall.created_at)} · `,
          interpolate(ngettext("%s memory", "%s memories", recall.returned), [recall.returned]), ` · ${recall.actor_name}`),
        h("button", { type: "button", class: "btn btn-small recall-compare", "aria-pressed": String(this.compareFrom === recall.id),
          title: gettext("Pick this recall, then the one to compare it with"),
          onclick: () => this._pickCompare(recall.id) }, this.compareFrom === recall.id ? gettext("Comparing… pick another") : gettext("Compare")));
    });
    fill(root, 
      h("h3", null, interpolate(gettext("Stored recalls (%s)"), [this.list.count])),
      search,
      this.list.error ? h("p", { class: "error small" }, this.list.error) : null,
      rows.length ? h("ul", { class: "recall-list" }, rows) : h("p", { class: "muted small" }, gettext("No recall touched this session yet.")),
      this.list.results.length < this.list.count
        ? h("button", { type: "button", class: "btn btn-small", onclick: () => this.loadList({ more: true }) }, gettext("More")) : null);
  }

  _pickCompare(recallId) {
    this.compareFrom = this.compareFrom === recallId ? null : recallId;
    this._renderList();
    this._status(this.compareFrom ? interpolate(gettext("Pick the recall to compare #%s with."), [recallId]) : "");
  }

  _renderMain() {
    const root = this.root.querySelector("#replay-main");
    if (!root) return;
    const replay = this.replay;
    if (!replay) {
      fill(root, h("p", { class: "muted replay-empty" },
        gettext("Run a recall or open a stored one to replay it: the seeds light up first, then each hop of activation, then the ranking.")));
      this._renderWhy();
      return;
    }
    const last = stepCount(replay) - 1;
    // Counted by the server among what this recall used: its memories and the edges touching them.
    const changed = replay.changes_since
      ? h("span", { class: "chip chip-proposal", id: "replay-changed",
        title: gettext("Changes since it ran to the memories it started from, reached or returned, and to their edges; changes elsewhere in the graph do not count.") },
      interpolate(ngettext("since it ran: %s change to what it used", "since it ran: %s changes to what it used",
        replay.changes_since), [replay.changes_since])) : null;
    const header = h("div", { class: "replay-head" },
      h("div", { class: "grow" },
        h("h3", { id: "replay-query-shown" }, replay.query_hidden ? gettext("A recall whose query is hidden from you") : `“${replay.query}”`),
        h("p", { class: "muted small" }, `#${replay.id} · ${replay.preset} · k ${replay.k} · `,
          replay.scope === "session" ? gettext("this session") : gettext("whole project"), ` · ${formatDateTime(replay.created_at)} · ${replay.actor_name} `,
          changed)),
      replay.query_hidden ? null : h("button", { type: "button", class: "btn btn-small", id: "replay-rerun",
        title: gettext("Run the same query and parameters on the graph as it is now, and compare"), onclick: () => this.rerun() }, gettext("Re-run now")));
    const controls = h("div", { class: "replay-controls" },
      h("button", { type: "button", class: "btn btn-small", id: "replay-prev", "aria-label": gettext("Previous step"), onclick: () => this.goTo(this.step - 1) }, "◀"),
      h("button", { type: "button", class: "btn btn-small", id: "replay-play", "aria-pressed": "false", onclick: () => this.play() }, gettext("Play")),
      h("button", { type: "button", class: "btn btn-small", id: "replay-next", "aria-label": gettext("Next step"), onclick: () => this.goTo(this.step + 1) }, "▶"),
      h("input", { type: "range", id: "replay-step", min: 0, max: last, step: 1, value: this.step, "aria-label": gettext("Replay step"),
        oninput: (event) => this.goTo(Number(event.target.value)) }),
      h("span", { id: "replay-step-label", class: "small" }, this._stepName(this.step)));
    fill(root, header, controls, this.comparison ? this._comparisonView() : this._rankingTable(replay));
    this._renderWhy();
  }

  _rankingTable(replay) {
    const seedOf = new Map(replay.seeds.map((s) => [s.memory_id, s.activation]));
    const rows = replay.ranking.map((entry) => {
      const memory = replay.memories[String(entry.memory_id)] || {};
      const c = entry.components || {};
      return h("tr", { dataset: { memoryId: entry.memory_id }, class: this.focusId === entry.memory_id ? "selected" : "",
        ...pickable(() => this._select(entry.memory_id)) },
      h("td", { class: "num" }, entry.rank),
      h("td", { class: memory.masked ? "masked" : "" }, h("span", { class: "muted" }, `#${entry.memory_id} `), shorten(entry.text, 120),
        memory.exists === false ? h("span", { class: "chip" }, gettext("gone")) : null,
        boostChips(c)),
      h("td", { class: "num" }, seedOf.has(entry.memory_id) ? formatNumber(seedOf.get(entry.memory_id)) : "–"),
      h("td", { class: "num" }, formatNumber(c.activation)),
      h("td", { class: "num" }, formatNumber(c.freshness)),
      h("td", { class: "num" }, formatNumber(c.importance)),
      h("td", { class: "num strong" }, formatNumber(entry.score, 3)));
    });
    return h("table", { class: "data-table ranking-table", id: "replay-ranking" },
      h("thead", null, h("tr", null, [
        [gettext("#"), gettext("Rank")], [gettext("Memory"), null], [gettext("Seed"), gettext("Seed score: the memory's activation as a seed")],
        [gettext("Act."), gettext("Activation, normalised to the strongest")], [gettext("Fresh."), gettext("Freshness")],
        [gettext("Imp."), gettext("Importance")], [gettext("Score"), gettext("The final score the ranking sorted by")],
      ].map(([text, title]) => h("th", { title }, text)))),
      h("tbody", null, rows));
  }

  _comparisonView() {
    const { first, second, diff } = this.comparison;
    const entered = new Set(diff.entered.map((e) => e.memory_id));
    const moved = new Map(diff.moved.map((m) => [m.memory_id, m]));
    const column = (replay, marks) => h("ol", { class: "compare-list" }, replay.ranking.map((entry) => h("li", {
      class: marks(entry.memory_id), dataset: { memoryId: entry.memory_id }, ...pickable(() => this._select(entry.memory_id)) },
    h("span", { class: "muted" }, `#${entry.memory_id} `), shorten(entry.text, 60),
    moved.has(entry.memory_id) && replay === second
      ? h("span", { class: "small move" }, ` ${moved.get(entry.memory_id).from} → ${moved.get(entry.memory_id).to}`) : null)));
    const leftIds = new Set(diff.left.map((e) => e.memory_id));
    const title = (replay) => `#${replay.id} · ${replay.preset} · ${formatDateTime(replay.created_at)}`;
    return h("div", { class: "compare", id: "replay-compare" },
      h("p", { class: "small" }, interpolate(gettext("%(entered)s entered, %(left)s left, %(moved)s moved, %(stayed)s stayed."),
        { entered: diff.entered.length, left: diff.left.length, moved: diff.moved.length, stayed: diff.stayed.length }, true)),
      h("div", { class: "compare-columns" },
        h("div", null, h("h4", null, gettext("Before"), " ", h("span", { class: "muted small" }, title(first))),
          column(first, (id) => (leftIds.has(id) ? "left" : ""))),
        h("div", null, h("h4", null, gettext("After"), " ", h("span", { class: "muted small" }, title(second))),
          column(second, (id) => (entered.has(id) ? "entered" : (moved.has(id) ? "moved" : ""))))));
  }

  _select(memoryId) {
    this.focus(memoryId);
    if (this.onSelect) this.onSelect({ type: "memory", id: memoryId });
  }

  _renderWhy() {
    const root = this.root.querySelector("#replay-why");
    if (!root) return;
    const replay = this.replay;
    if (!replay) {
      fill(root);
      return;
    }
    const entry = replay.ranking.find((r) => r.memory_id === this.focusId);
    const why = this.focusId === null ? this._stepDetail()
      : h("div", { id: "replay-path" },
        h("h4", null, interpolate(gettext("Why #%s"), [this.focusId])),
        entry ? [h("p", { class: "path" }, pathText(entry, replay, this.labels, this.originOf)),
          h("p", { class: "muted small" }, interpolate(gettext("score %(score)s = activation %(a)s, freshness %(f)s, importance %(i)s (weighted)"),
            { score: formatNumber(entry.score, 3), a: formatNumber(entry.components.activation), f: formatNumber(entry.components.freshness),
              i: formatNumber(entry.components.importance) }, true)),
          boostSentences(entry.components)]
          : h("p", { class: "muted small" }, this._reachedText(this.focusId)));
    const differs = this.comparison ? this._edgeDiff() : null;
    fill(root, why, differs, h("h4", null, gettext("Context it told")),
      replay.context_lines.length ? h("ol", { class: "context-lines", id: "replay-context" }, replay.context_lines.filter((l) => l.memory_id !== null)
        .map((line) => h("li", { dataset: { memoryId: line.memory_id }, class: line.memory_id === this.focusId ? "selected" : "",
          ...pickable(() => this._select(line.memory_id)) }, line.text.replace(/^\d+\.\s*/, ""))))
        : h("p", { class: "muted small" }, gettext("The context is hidden from you: it may quote memories you may not see.")),
      replay.narrative ? [h("h4", null, gettext("Narrative")), h("p", { class: "small" }, replay.narrative)] : null);
  }

  /** What the current step did, in words: the seeds with their sources, or each arrival and its edge. */
  _stepDetail() {
    const replay = this.replay;
    const last = stepCount(replay) - 1;
    const hint = h("p", { class: "muted small" }, gettext("Click a memory to see how activation reached it."));
    if (this.step === last) return hint;
    const arrivals = (replay.steps.find((s) => s.hop === this.step) || { arrivals: [] }).arrivals;
    const seeds = new Map(replay.seeds.map((s) => [s.memory_id, s]));
    const text = (id) => shorten((replay.memories[String(id)] || {}).text || "", 48);
    const items = arrivals.slice(0, 30).map((a) => h("li", { dataset: { memoryId: a.memory_id }, ...pickable(() => this._select(a.memory_id)) },
      this.step === 0
        ? `#${a.memory_id} ${text(a.memory_id)} — ${sourcesText((seeds.get(a.memory_id) || {}).sources)}`
        : `#${a.memory_id} ${text(a.memory_id)} ← #${a.from} ${this._relation(a.relation, a.edge_id)} ${formatNumber(a.activation)}`));
    return h("div", { id: "replay-step-detail" },
      h("h4", null, this._stepName(this.step)),
      h("ol", { class: "context-lines" }, items),
      arrivals.length > 30 ? h("p", { class: "muted small" }, interpolate(gettext("and %s more"), [arrivals.length - 30])) : null,
      hint);
  }

  _reachedText(memoryId) {
    const arrival = this.replay.steps.flatMap((s) => s.arrivals).filter((a) => a.memory_id === memoryId)
      .sort((a, b) => b.activation - a.activation)[0];
    if (!arrival) return gettext("This recall did not reach this memory.");
    if (!arrival.hop) return gettext("A seed that did not make the ranking.");
    return interpolate(gettext("Reached at hop %(hop)s from #%(from)s through %(relation)s (%(value)s), below the ranking's cut."),
      { hop: arrival.hop, from: arrival.from, relation: this._relation(arrival.relation, arrival.edge_id), value: formatNumber(arrival.activation) }, true);
  }

  _edgeDiff() {
    const { diff, first, second } = this.comparison;
    const carried = new Map([first, second].flatMap((r) => r.steps.flatMap((s) => s.arrivals))
      .filter((a) => a.edge_id).map((a) => [a.edge_id, a]));
    const describe = (id) => {
      const a = carried.get(id);
      return a ? `${this._relation(a.relation, id)} #${a.from} → #${a.memory_id}` : interpolate(gettext("Edge #%s"), [id]);
    };
    const list = (ids) => (ids.length ? h("ul", { class: "small" }, ids.map((id) => h("li", null,
      h("button", { type: "button", class: "link", dataset: { edgeId: id }, onclick: () => this.onSelect({ type: "edge", id }) }, describe(id)))))
      : h("p", { class: "muted small" }, gettext("none")));
    return h("div", { class: "edge-diff", id: "replay-edge-diff" },
      h("h4", null, gettext("Edges that made the difference")),
      h("p", { class: "small" }, gettext("Only before:")), list(diff.edges_only_first),
      h("p", { class: "small" }, gettext("Only after:")), list(diff.edges_only_second));
  }
}
