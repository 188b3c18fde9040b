// Unit tests of 为你推荐's reckoning (theme/static/recommend.js) with node's own runner:
// library files read into entries, the profile's merges, a shared link's ids, and the
// ranking on a small window made in the format pipeline/site/index/recommend.py writes.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  MAX_LINK_SEEDS, clean, entryKey, fromEntry, linkIds, merged, rank, read, rowTerms, rowWords, union, windowOf,
  withEntries, withMute, withoutMute,
} from "../../theme/static/recommend.js";

test("four BibTeX entries with parentheses in their text are four entries", function () {
  const text = "@article{a, title={Sad :(}, eprint={2606.00001}, archivePrefix={arXiv}}\n" +
    "@misc{b, title={Steps}, abstract={1) read; 2) rank (twice)}, doi={10.1000/x.y}}\n" +
    "@article(c, title={Paren entry) still}, url={https://arxiv.org/abs/2606.00003v2})\n" +
    "@book{d, title={Deep Graph Kernels}}\n";
  const got = read(text).entries;
  assert.equal(got.length, 4);
  assert.deepEqual(got.map(entryKey).slice(0, 3), ["arxiv:2606.00001", "doi:10.1000/x.y", "arxiv:2606.00003"]);
  assert.equal(got[1].text, "1) read; 2) rank (twice)");
  assert.equal(got[2].title, "Paren entry) still");
});

test("RIS, CSL-JSON, plain lists and profile exports are told apart", function () {
  assert.deepEqual(read("TY  - JOUR\nTI  - T\nUR  - https://arxiv.org/abs/2606.00002\nER  - \n").entries,
    [{ title: "T", text: "", id: "2606.00002" }]);
  assert.deepEqual(read(JSON.stringify([{ title: "t", number: "arXiv:2606.00004" }])).entries,
    [{ title: "t", text: "", id: "2606.00004" }]);
  assert.deepEqual(read("arXiv:2606.00005\nnothing\n10.1000/abc.\n").entries,
    [{ title: "", text: "", id: "2606.00005" }, { title: "", text: "", doi: "10.1000/abc" }]);
  assert.ok(read('{"papertrail_profile": 1}').profile);
});

// The merges go through union(): each item's key is asked for a bounded number of times,
// so merging grows with the lists' length, never with its square (a search of the list
// per item, as `imported.some` inside `forEach` did, asks once per pair).
test("a library of 20,000 entries merges by key, each key asked for a fixed number of times", function () {
  const entries = [];
  for (let i = 0; i < 20000; i++) entries.push({ id: "2606." + String(i).padStart(5, "0"), title: "", text: "" });
  let asked = 0;
  const counting = function (e) { asked++; return entryKey(e); };
  const got = union(entries.slice(0, 10000), entries, counting);
  assert.equal(got.length, 20000);
  assert.ok(asked <= 2 * 30000, asked);
  const p = withEntries({ imported: entries.slice(0, 5), removed: ["arxiv:2606.00007", "doi:x"], muted: [] },
    entries.concat(entries));
  assert.equal(p.imported.length, 20000);
  assert.deepEqual(p.imported.slice(0, 3).map(entryKey), ["arxiv:2606.00000", "arxiv:2606.00001", "arxiv:2606.00002"]);
  assert.deepEqual(p.removed, ["doi:x"]);  // imported again, no longer removed
});

test("an exported profile merges in; what is here stays", function () {
  const here = clean({ imported: [{ id: "2606.00001", title: "Mine" }], removed: ["a"],
    muted: [{ kind: "author", value: "Ann" }] });
  const there = clean({ imported: [{ id: "2606.00001", title: "Theirs" }, { title: "New" }],
    removed: ["a", "b"], muted: [{ kind: "author", value: "Ann" }, { kind: "topic", value: "t" },
      { kind: "nope", value: "x" }] });
  assert.deepEqual(merged(here, there), {
    imported: [{ id: "2606.00001", title: "Mine", text: "" }, { title: "New", text: "" }],
    removed: ["a", "b"], muted: [{ kind: "author", value: "Ann" }, { kind: "topic", value: "t" }] });
  const muted = withMute(here.muted, { kind: "category", value: "cs.CV" });
  assert.equal(withMute(muted, { kind: "category", value: "cs.CV" }).length, 2);
  assert.deepEqual(withoutMute(muted, { kind: "author", value: "Ann" }), [{ kind: "category", value: "cs.CV" }]);
});

test("a shared link's ids: each once, hostile parts dropped, at most MAX_LINK_SEEDS", function () {
  assert.deepEqual(linkIds("?seed=2606.00001v2,javascript:alert(1),<img>,2606.00001,cs/0601001"),
    ["2606.00001", "cs/0601001"]);
  assert.equal(linkIds(""), null);
  const many = Array.from({ length: 300 }, function (_, i) { return "2606." + String(i).padStart(5, "0"); });
  assert.equal(linkIds("?seed=" + many.join(",")).length, MAX_LINK_SEEDS);
});

// Four papers in two dimensions, laid out as vectors.bin: title keys, terms, term weights,
// IDFs, rows, the words' rows. Words: "graph" (a row of its own) and "kernel"; each paper's
// one term stored as its step from 0 (its index): the high bytes, then the low bytes.
function tinyWindow(terms) {
  const meta = { count: 4, dims: 2, terms: 1, shown: 1, vocab: ["graph", "kernel"], vectors: 1,
    weights: [1], idf_step: 32, ids: ["a", "b", "c", "d"], doi: {}, first_doc: 0 };
  const buf = new ArrayBuffer(4 * 4 + 4 * 2 + 4 + 2 + 4 * 2 + 2);
  new Uint8Array(buf, 16, 4).set(terms.map(function (t) { return t >> 8; }));
  new Uint8Array(buf, 20, 4).set(terms.map(function (t) { return t & 0xff; }));
  new Uint8Array(buf, 24, 4).set(terms.map(function (t) { return t === 0xffff ? 0 : 255; }));
  new Uint8Array(buf, 28, 2).set([32, 64]);
  new Int8Array(buf, 30, 8).set([10, 0, 10, 1, 7, 7, 0, 10]);
  new Int8Array(buf, 38, 2).set([3, 4]);
  return windowOf(meta, buf);
}
const NONE = [0xffff, 0xffff, 0xffff, 0xffff];

test("ranking by meaning alone: half the centroid's cosine, half the closest seed's, as z-scores", function () {
  const w = tinyWindow(NONE);
  const seed = fromEntry(w, { id: "a", title: "", text: "" }, "arxiv:a", "link");
  assert.equal(seed.placed, "row");
  const ranked = rank(w, [seed]);
  assert.deepEqual(ranked.map(function (x) { return x.row; }), [1, 2, 3]);  // the seed's row left out
  assert.ok(ranked[0].score > ranked[1].score && ranked[1].score > ranked[2].score);
  const sum = ranked.reduce(function (s, x) { return s + x.score; }, 0);
  assert.ok(Math.abs(sum) < 1e-5, sum);  // a z-score sums to 0 over the papers ranked
});

test("words the seed shares lift a paper above one only closer in meaning", function () {
  const w = tinyWindow([1, 0xffff, 1, 0xffff]);  // a and c share "kernel"
  const seed = fromEntry(w, { id: "a", title: "", text: "" }, "arxiv:a", "link");
  assert.deepEqual(Array.from(seed.words.keys()), [1]);
  assert.deepEqual(rank(w, [seed]).map(function (x) { return x.row; }), [2, 1, 3]);
});

test("an entry no paper matches is placed by its own words in both measures", function () {
  const w = tinyWindow([1, 0xffff, 1, 0xffff]);
  const seed = fromEntry(w, { title: "The graph kernel", text: "" }, "title:x", "import");
  assert.equal(seed.placed, "text");
  assert.deepEqual(Array.from(seed.words.keys()).sort(), [0, 1]);  // "graph", "kernel"; "the" is in no vocabulary
  assert.equal(seed.words.get(1), 1 + 64 / 32);
  assert.deepEqual(Array.from(seed.vector), [3 * 1, 4 * 1]);  // "graph"'s row × its weight
  assert.deepEqual(seed.terms, [1, 0]);  // heaviest first: "kernel" is the rarer
  assert.deepEqual(rank(w, [seed]).slice(0, 2).map(function (x) { return x.row; }), [2, 0]);
});

test("a paper's terms, stored as steps, read as their indices; its heaviest say why", function () {
  const meta = { count: 1, dims: 2, terms: 3, shown: 1, vocab: Array.from({ length: 300 }, String), vectors: 0,
    weights: [], idf_step: 32, ids: ["x"], doi: {}, first_doc: 0 };
  const buf = new ArrayBuffer(4 + 6 + 3 + 300 + 2);
  new Uint8Array(buf, 4, 6).set([0, 1, 0xff, 1, 2, 0xff]);  // steps 1 and 258: indices 1 and 259, then none
  new Uint8Array(buf, 10, 3).set([5, 7, 0]);
  const w = windowOf(meta, buf);
  assert.deepEqual(Array.from(rowWords(w, 0).entries()), [[1, 5], [259, 7]]);
  assert.deepEqual(rowTerms(w, 0), [259]);
});
