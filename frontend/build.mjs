// Bundle the browser code into dist/cw/ (served by Django's staticfiles; dist/ is not committed).
//   node build.mjs           one production build (minified, with source maps)
//   node build.mjs --watch   rebuild on change while developing
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

import * as esbuild from "esbuild";

const options = {
  absWorkingDir: dirname(fileURLToPath(import.meta.url)),
  // page.js and prefetch.js are classic scripts (no import/export; each wraps itself in a function), so the
  // ESM output runs as a plain <script>. swagger.css replaces the API docs page's inline <style> (CSP).
  entryPoints: {
    session: "src/session.js", review: "src/review.js", forget: "src/forget.js", page: "src/page.js", prefetch: "src/prefetch.js",
    app: "styles/app.css", swagger: "styles/swagger.css",
  },
  outdir: "dist/cw",
  bundle: true,
  format: "esm",
  target: ["es2020"],
  minify: true,
  sourcemap: "linked",
  legalComments: "linked",
  logLevel: "info",
};

if (process.argv.includes("--watch")) {
  const context = await esbuild.context({ ...options, minify: false });
  await context.watch();
} else {
  await esbuild.build(options);
}
