// Behaviour every server-rendered page shares, as a static script: the Content-Security-Policy
// (script-src 'self') refuses inline handlers such as onchange="…".
(function () {
  function wire() {
    // The language switch posts its form as soon as a language is picked (the <noscript> button otherwise).
    const select = document.getElementById("language-select");
    if (select && select.form) select.addEventListener("change", () => select.form.submit());
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wire);
  else wire();
})();
