// HTTP reads of the session (cookie session auth). Every function throws on a non-2xx answer.

async function getJson(url, started = null) {
  const response = await (started || fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } }));
  if (!response.ok) {
    const error = new Error(`${response.status} ${response.statusText} for ${url}`);
    error.status = response.status;
    throw error;
  }
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
