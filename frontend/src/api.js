// HTTP calls of the session page (cookie session auth). Every function throws on a non-2xx answer, with the
// server's error message when it sent one.

export function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

/** The server's error message for a failed call (its JSON `error.message`), else the HTTP status. */
export async function failure(response) {
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body && body.error && body.error.message) message = body.error.message;
  } catch { /* not JSON: keep the status line */ }
  const error = new Error(message);
  error.status = response.status;
  return error;
}

async function getJson(url, started = null) {
  const response = await (started || fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } }));
  if (!response.ok) throw await failure(response);
  return response.json();
}

/** A write as the logged-in person (CSRF token from the cookie). */
export async function sendJson(method, url, body = null) {
  const response = await fetch(url, {
    method, credentials: "same-origin",
    headers: { Accept: "application/json", "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
    body: body === null ? null : JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response);
  return response.json();
}

function withQuery(url, params) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== null && value !== undefined) query.set(key, value);
  const text = query.toString();
  return text ? `${url}${url.includes("?") ? "&" : "?"}${text}` : url;
}

export function fetchGraph(config, params = {}) {
  const url = withQuery(config.urls.graph, params);
  // The page's head may have started this very request before the module loaded.
  const early = globalThis.cwGraphRequest;
  globalThis.cwGraphRequest = null;
  return getJson(url, early && early.url === url ? early.response : null);
}

/** Memories of other sessions at the far end of this session's edges, as the graph's `ghosts`: {ghosts}. */
export function fetchGhosts(config, ids) {
  return getJson(withQuery(config.urls.ghosts, { ids: ids.join(",") }));
}

/** One page of the change log after `after`: {changes, last_change_id, has_more}. */
export function fetchChanges(config, after, limit = 1000) {
  return getJson(withQuery(config.urls.changes, { after, limit }));
}

/** One memory's history (its changes and its edges') or one edge's: `{ memory: id }` or `{ edge: id }`. */
export function fetchHistory(config, of) {
  return getJson(withQuery(config.urls.changes, { after: 0, limit: 1000, ...of }));
}

/** Every change after `after`, page by page; onPage sees each page as it arrives. */
export async function fetchAllChanges(config, after, onPage = null) {
  const all = [];
  let cursor = after;
  for (;;) {
    const page = await fetchChanges(config, cursor);
    all.push(...page.changes);
    if (onPage) onPage(page.changes);
    if (!page.has_more || page.last_change_id <= cursor) return { changes: all, last: page.last_change_id };
    cursor = page.last_change_id;
  }
}

export function fetchInteraction(config, interactionId) {
  return getJson(config.urls.interaction.replace("/0/", `/${interactionId}/`));
}

/** One page of stored recalls: `{ session, q, memory, edge, limit, offset }` → {count, next, results}. */
export function fetchRecalls(config, params = {}) {
  return getJson(withQuery(config.urls.recalls, params));
}

export function fetchRecall(config, recallId) {
  return getJson(config.urls.recallDetail.replace("/0/", `/${recallId}/`));
}

export function fetchComparison(config, firstId, secondId) {
  return getJson(config.urls.recallCompare.replace("/0/compare/0/", `/${firstId}/compare/${secondId}/`));
}

/** Run a recall now ({query, session_id, k, preset, params}); the answer names its stored trace. */
export function runRecall(config, body) {
  return sendJson("POST", config.urls.recall, body);
}

export function rerunRecall(config, recallId) {
  return sendJson("POST", config.urls.recallRerun.replace("/0/", `/${recallId}/`));
}

/** The risks API of a memory: its URL in the config when the page sends one, else beside the memory's own. */
export function risksUrl(config, memoryId) {
  if (config.urls.risks) return config.urls.risks.replace("/0/", `/${memoryId}/`);
  return `${config.urls.memory.replace("/0/", `/${memoryId}/`)}risks/`;
}

/** Why a memory may be out of date: [{parent_id, parent_label, change, before, after, replaced_by_id, …}]. */
export function fetchRisks(config, memoryId) {
  return getJson(risksUrl(config, memoryId));
}
