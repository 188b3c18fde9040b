// 为你推荐 as the browser ranks a shared link (for-you/?seed=a,b,c): the site's own
// recommend/ files read by recommend.js, each link's seeds made and ranked by the same calls
// foryou.js makes (entrySeeds → fromEntry, usable, MAX_SEEDS, rank). No mutes: a link's view
// starts with none. Used by bench/relevance.py.
//   node bench/_foryou.mjs SITE_OUTPUT < {"name": ["id", ...], ...}
//   → {"name": ["id", ...best first], ...}
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";

import { MAX_SEEDS, entryKey, fromEntry, rank, usable, windowOf } from "../theme/static/recommend.js";

const site = process.argv[2];
const meta = JSON.parse(gunzipSync(readFileSync(join(site, "recommend/meta.json.gz"))).toString("utf8"));
const bytes = gunzipSync(readFileSync(join(site, "recommend/vectors.bin.gz")));
// windowOf reads typed arrays at offsets of the buffer: a fresh, aligned one.
const w = windowOf(meta, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));

const links = JSON.parse(readFileSync(0, "utf8"));
const out = {};
for (const [name, ids] of Object.entries(links)) {
  const seeds = ids.map(function (id) {
    const e = { id: id, title: "", text: "" };
    return fromEntry(w, e, entryKey(e), "link");
  }).filter(usable).slice(0, MAX_SEEDS);
  out[name] = seeds.length ? rank(w, seeds).map(function (x) { return meta.ids[x.row]; }) : [];
}
process.stdout.write(JSON.stringify(out));
