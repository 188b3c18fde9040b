// Search as the browser runs it: a built site's search/ files read by engine.js's
// createIndex (the module search.js uses), each query searched as typed and submitted
// (a trailing space: no word is still being typed). Used by bench/search_quality.py.
//   node bench/_search.mjs SITE_OUTPUT ENGINE_JS < ["query", ...]
//   → {"query": {"ids": ["id", ...best first, at most 10], "suggest": "…" or null}, ...}
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";

const [site, enginePath] = process.argv.slice(2);
const engine = await import(pathToFileURL(resolve(enginePath)).href);
const index = engine.createIndex(function (path) {
  const bytes = readFileSync(join(site, path));
  const text = path.endsWith(".gz") ? gunzipSync(bytes).toString("utf8") : bytes.toString("utf8");
  return Promise.resolve(JSON.parse(text));
});
const queries = JSON.parse(readFileSync(0, "utf8"));
const out = {};
for (const q of queries) {
  const r = await index.search(q + " ");
  const docs = await index.docs(r.docs.slice(0, 10));
  out[q] = { ids: docs.map(function (d) { return d.id; }), suggest: r.suggest || null };
}
process.stdout.write(JSON.stringify(out));
