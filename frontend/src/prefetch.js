// The session page's head: start reading the graph while the translation catalog and the module load.
// A classic script (not a module, so it runs at once, before the deferred module) loaded from our own
// origin, because the Content-Security-Policy refuses inline scripts. The module's fetchGraph picks the
// request up from window.cwGraphRequest when the URL matches (src/api.js).
(function () {
  const script = document.currentScript;
  const base = script && script.dataset.graphUrl;
  if (!base) return;
  const page = new URLSearchParams(location.search);
  const query = new URLSearchParams();
  // Same keys in the same order as session.js passes them, so the URLs compare equal.
  for (const key of ["around", "hops", "limit"]) if (page.get(key)) query.set(key, page.get(key));
  const url = base + (query.toString() ? `?${query}` : "");
  window.cwGraphRequest = {
    url,
    response: fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } }),
  };
})();
