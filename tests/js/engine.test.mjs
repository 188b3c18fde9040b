// Unit tests of the search engine (theme/static/engine.js) with node's own runner:
// `node --test tests/js/` (make test runs it). The index here is made in the format
// pipeline/site/index/search.py writes (docs/SEARCH.md), from a handful of papers, and loaded
// through a function that records what the engine asked for.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  createIndex, filtering, fnv1a, localTime, oneEdit, pairs, queryTerms, runs, sentence, tokens,
  venueLabel,
} from "../../theme/static/engine.js";

const FIELDS = {
  doc: ["id", "title", "authors", "n_authors", "categories", "topics", "flags", "updated",
    "first_seen", "published", "version", "tldr", "venue", "tier"],
  flag: ["ai", "revised", "hf", "page", "venue"],
  facet: ["categories", "topics", "flags", "venue", "updated", "first_seen", "published"],
  term: ["df", "capped", "postings"],
};
const CATEGORIES = ["cs.CV", "cs.LG", "cs.CL"];
// Doc numbers in index order (oldest first); minutes since 1970 for the clocks.
const PAPERS = [
  { id: "2606.00001", title: "Diffusion models for images", authors: ["Ling Yang", "Ann Lee"],
    cats: ["cs.CV"], ai: true, updated: 1000, words: { diffusion: 30, models: 10, images: 10 } },
  { id: "2606.00002", title: "Language models that reason", authors: ["Bo Yangson"],
    cats: ["cs.CL"], ai: true, updated: 2000, words: { language: 30, models: 20, reason: 10 } },
  { id: "2606.00003", title: "Diffusion of heat in graphs", authors: ["Yang Ling"],
    cats: ["cs.LG"], ai: false, updated: 3000, words: { diffusion: 20, heat: 10, graphs: 10 } },
];

// The index's files by path, as index/search.py lays them out (one facet block, one chunk):
// each paper's id, its words, its authors' words and its title's pairs; `df` overrides
// the count a term's record says (its postings stay).
function makeIndex(shards, papers = PAPERS, df = {}) {
  const postings = {};
  papers.forEach(function (p, doc) {
    const words = Object.assign({ [p.id]: 80 }, p.words);  // its id, its words
    p.authors.forEach(function (a) { tokens(a).forEach(function (t) { words[t] = words[t] || 5; }); });
    pairs(tokens(p.title)).forEach(function (t) { words[t] = 5; });
    Object.entries(words).forEach(function ([t, score]) { (postings[t] = postings[t] || []).push([doc, score]); });
  });
  const files = {};
  const shard = function (t) {
    const path = "search/t/" + (fnv1a(t) % shards) + ".json.gz";
    return files[path] || (files[path] = { prefixes: {}, terms: {} });
  };
  Object.entries(postings).forEach(function ([t, list]) {
    let last = 0;
    const flat = [];
    list.forEach(function ([doc, score]) { flat.push(doc - last, score); last = doc; });
    shard(t).terms[t] = [df[t] || list.length, 0, flat];
    for (let n = 2; n < Math.min(t.length, 13); n++) {
      const pre = t.slice(0, n), into = shard(pre).prefixes;
      into[pre] = (into[pre] || []).concat([t]).slice(0, 3);
    }
  });
  for (let k = 0; k < shards; k++) {
    files["search/t/" + k + ".json.gz"] = files["search/t/" + k + ".json.gz"] || { prefixes: {}, terms: {} };
  }
  const flags = function (p) { return (p.ai ? 1 : 0) | 8; };  // every paper may have a page
  files["search/manifest.json"] = {
    docs: papers.length, shards: shards, chunk: 32, facet_block: 4096, categories: CATEGORIES,
    topics: [], venues: ["CVPR"], as_of: 3000, fields: FIELDS, similar_shards: 1,
    tiers: { main: "{value} · 主会", workshop: "{value} · 研讨会" },
    timezone: "Asia/Shanghai", tz_label: "Beijing time", pages_from: [2000, "2606.00002"],
    glossary: { 扩散: "diffusion" },
  };
  files["search/d/0.json.gz"] = papers.map(function (p) {
    return [p.id, p.title, p.authors, p.authors.length, p.cats, [], flags(p), p.updated,
      p.updated, p.updated, 1, "", p.venue || "", p.tier || ""];
  });
  files["search/f/0.json.gz"] = {
    categories: papers.map(function (p) { return p.cats.map(function (c) { return CATEGORIES.indexOf(c); }); }),
    topics: papers.map(function () { return []; }), flags: papers.map(flags),
    venue: papers.map(function () { return -1; }),
    updated: papers.map(function (p) { return p.updated; }),
    first_seen: papers.map(function (p) { return p.updated; }),
    published: papers.map(function (p) { return p.updated; }),
  };
  files["search/s/0.json.gz"] = { "2606.00001": [0, 2, 1] };
  return files;
}

function indexOver(shards = 4, papers = PAPERS, df = {}) {
  const files = makeIndex(shards, papers, df);
  const asked = [];
  const index = createIndex(function (path) {
    asked.push(path);
    return path in files ? Promise.resolve(files[path]) : Promise.reject(new Error(path + ": HTTP 404"));
  });
  return { index, asked };
}

async function ids(index, query, opts) {
  const r = await index.search(query, opts);
  return (await index.docs(r.docs)).map(function (d) { return d.id; });
}

test("tokens are words, whole arXiv ids and CJK bigrams, folded", function () {
  assert.deepEqual(tokens("Schrödinger's CAT-like naïve"), ["schrodinger", "cat", "like", "naive"]);
  assert.deepEqual(tokens("扩散模型 for 2606.12345v2 我"), ["扩散", "散模", "模型", "for", "2606.12345", "v2", "我"]);
  assert.deepEqual(tokens("a b 7"), ["7"]);
});

test("the word being typed is a prefix; a trailing space or a number closes it", function () {
  assert.deepEqual(queryTerms("diffusion mod"), [{ term: "diffusion", prefix: false }, { term: "mod", prefix: true }]);
  assert.deepEqual(queryTerms("diffusion mod "), [{ term: "diffusion", prefix: false }, { term: "mod", prefix: false }]);
  assert.deepEqual(queryTerms("2606.12345"), [{ term: "2606.12345", prefix: false }]);
});

test("fnv1a hashes UTF-8 as the index builder does", function () {
  assert.equal(fnv1a("diffusion"), 3366184964);  // pipeline.site.index.search.fnv1a
  assert.equal(fnv1a("扩散"), 3001642927);
});

test("one edit: a letter added, dropped, changed or two swapped", function () {
  assert.ok(oneEdit("difusion", "diffusion") && oneEdit("diffusoin", "diffusion"));
  assert.ok(oneEdit("diffusionn", "diffusion") && oneEdit("diffuson", "diffusion"));
  assert.ok(oneEdit("diffasion", "diffusion"));
  assert.ok(!oneEdit("diffusion", "diffusion") && !oneEdit("dfusion", "diffusion"));
  assert.ok(!oneEdit("idffuison", "diffusion"));
});

test("runs mark whole words, a prefix being typed, CJK anywhere, on the original text", function () {
  const terms = queryTerms("naive mod");
  assert.deepEqual(runs("Naïve models, remodel", terms),
    [["Naïve", true], [" ", false], ["mod", true], ["els, remodel", false]]);
  assert.deepEqual(runs("本文提出扩散模型", queryTerms("扩散 ")), [["本文提出", false], ["扩散", true], ["模型", false]]);
  assert.deepEqual(runs("nothing here", terms), [["nothing here", false]]);
});

test("the sentence with the most query terms is the one shown", function () {
  const text = "We study graphs. Diffusion helps, e.g. on graphs. Fig. 2 shows diffusion models. " +
    "Nothing else.";
  assert.equal(sentence(text, queryTerms("diffusion models ")), "Fig. 2 shows diffusion models.");
  assert.equal(sentence(text, queryTerms("graphs ")), "We study graphs.");
  assert.equal(sentence(text, queryTerms("absent ")), "");
  const long = "First words come here, then more words follow until the term diffusion " +
    "shows and the sentence goes on and on.";
  assert.equal(sentence(long, queryTerms("diffusion "), 40), "…the term diffusion shows and the…");
  assert.equal(sentence(long, queryTerms("first "), 20), "First words come…");
  assert.equal(sentence(long, queryTerms("on "), 30), "…the sentence goes on and on.");
});

test("every word must match; the best scores come first", async function () {
  const { index } = indexOver();
  assert.deepEqual(await ids(index, "diffusion "), ["2606.00001", "2606.00003"]);
  assert.deepEqual(await ids(index, "diffusion images "), ["2606.00001"]);
  assert.deepEqual(await ids(index, "models "), ["2606.00002", "2606.00001"]);
  assert.deepEqual(await ids(index, "unknown "), []);
});

test("a query loads the manifest, its terms' shards and nothing of other terms", async function () {
  const { index, asked } = indexOver(64);
  await index.search("heat ");
  assert.deepEqual(asked, ["search/manifest.json", "search/t/" + (fnv1a("heat") % 64) + ".json.gz"]);
});

test("the word being typed completes; a long word one edit off finds the word", async function () {
  const { index } = indexOver();
  assert.deepEqual(await ids(index, "lang"), ["2606.00002"]);
  assert.deepEqual(await ids(index, "difusion "), ["2606.00001", "2606.00003"]);
  assert.deepEqual(await ids(index, "hea "), []);  // a closed short word is the word only
});

test("filters and a clock sort read the facets", async function () {
  const { index } = indexOver();
  assert.deepEqual(await ids(index, "diffusion ", { cat: "cs.LG" }), ["2606.00003"]);
  assert.deepEqual(await ids(index, "diffusion ", { ai: "1" }), ["2606.00001"]);
  assert.deepEqual(await ids(index, "diffusion ", { sort: "updated" }), ["2606.00003", "2606.00001"]);
  assert.deepEqual(await ids(index, "", { ai: "1" }), ["2606.00002", "2606.00001"]);  // browse
  assert.deepEqual(await ids(index, "", { range: "24h" }), ["2606.00003", "2606.00002"]);
  assert.ok(filtering({ cat: "cs.CV" }) && !filtering({ sort: "updated" }));
});

test("an author is a phrase: au: keeps exact names, quotes rank them first", async function () {
  const { index } = indexOver();
  assert.deepEqual(await ids(index, 'au:"Ling Yang"'), ["2606.00001"]);
  // quoted, the words next to each other and in order: "Yang Ling" is not "Ling Yang"
  assert.deepEqual(await ids(index, '"Ling Yang"'), ["2606.00001"]);
  assert.deepEqual((await ids(index, "au:Yang")).sort(), ["2606.00001", "2606.00003"]);  // not Yangson
});

test("a Chinese query also runs in English by the glossary", async function () {
  const { index } = indexOver();
  assert.deepEqual(await ids(index, "扩散 "), ["2606.00001", "2606.00003"]);
});

test("records are read by the manifest's names; pages, similar papers, ids", async function () {
  const { index } = indexOver();
  const [old, mid] = await index.docs([0, 1]);
  assert.equal(old.title, "Diffusion models for images");
  assert.deepEqual(old.is, { ai: true, revised: false, hf: false, page: true, venue: false });
  assert.ok(!index.hasPage(old) && index.hasPage(mid));  // older than pages_from
  const like = await index.similarTo("2606.00001");
  assert.equal(like.of.id, "2606.00001");
  assert.deepEqual(like.docs, [2, 1]);
  assert.deepEqual((await index.similarTo("2606.99999")).docs, []);
  assert.equal((await index.paperById("2606.00002")).title, "Language models that reason");
  assert.equal(await index.paperById("2606.99999"), undefined);
});

test("times read in the manifest's zone with its label", async function () {
  const { index } = indexOver();
  await index.manifest();
  assert.equal(localTime(29671200, index.state.zone), "2026-06-01 08:00 Beijing time");
});

test("a file the index lacks fails the query with its path", async function () {
  const index = createIndex(function (path) { return Promise.reject(new Error(path + ": HTTP 404")); });
  await assert.rejects(index.search("x "), /search\/manifest\.json: HTTP 404/);
});

// Papers for phrases, venues and suggestions: each with the words its postings hold.
function paper(n, title, extra) {  // ids 2606.10001… (n < 10), 2606.10010…
  const words = {};
  tokens(title).forEach(function (t) { words[t] = 10; });
  return Object.assign({ id: "2606.1" + String(n).padStart(4, "0"), title: title, authors: [], cats: ["cs.LG"], ai: true,
    updated: 1000 + n, words: words }, extra || {});
}

test("pairs are neighbouring words, the short ones skipped, as the index makes them", function () {
  assert.deepEqual(pairs(tokens("Chain-of-Thought for a VLA")), ["chain_thought", "thought_vla"]);
  assert.deepEqual(pairs(tokens("扩散 model")), []);
});

test("a quoted phrase needs its words next to each other, in order", async function () {
  const { index } = indexOver(4, [
    paper(1, "A diffusion policy for robots"),
    paper(2, "Policy search with diffusion"),
    paper(3, "Diffusion policy of the robot arm"),
    paper(4, "Policy diffusion in networks")]);
  assert.deepEqual((await ids(index, '"diffusion policy"')).sort(), ["2606.10001", "2606.10003"]);
  // unquoted, every paper with both words, those holding them together first
  const loose = await ids(index, "diffusion policy ");
  assert.deepEqual(loose.slice(0, 2).sort(), ["2606.10001", "2606.10003"]);
  assert.deepEqual(loose.slice(2).sort(), ["2606.10002", "2606.10004"]);
});

test("a venue query ranks main conference, findings, workshop, then the rest", async function () {
  const cvpr = function (n, venue, tier, score) {
    return paper(n, "Paper " + n, { venue: venue, tier: tier, words: { cvpr: score } });
  };
  const { index } = indexOver(4, [
    cvpr(1, "CVPR 2026 Workshop", "workshop", 90), cvpr(2, "ICML 2026", "main", 80),
    cvpr(3, "CVPR 2026 Findings", "findings", 20), cvpr(4, "CVPR 2026", "main", 10)]);
  assert.deepEqual(await ids(index, "CVPR "), ["2606.10004", "2606.10003", "2606.10001", "2606.10002"]);
  // by a clock, the clock's order
  assert.deepEqual(await ids(index, "CVPR ", { sort: "updated" }),
    ["2606.10004", "2606.10003", "2606.10002", "2606.10001"]);
  await index.manifest();
  const [workshop] = await index.docs([0]);
  assert.equal(venueLabel(workshop, index.state), "CVPR 2026 Workshop · 研讨会");
  assert.equal(venueLabel({ venue: "CVPR 2026 Findings", tier: "findings" }, index.state),
    "CVPR 2026 Findings");  // a tier the manifest does not word: the badge alone
  assert.equal(venueLabel({ venue: "DOI", tier: "journal" }, index.state), "DOI");
});

test("did you mean: a word one edit away in many more papers", async function () {
  const many = [paper(1, "Reinforcment of beams")];
  for (let n = 2; n < 14; n++) many.push(paper(n, "Reinforcement learning " + n));
  const { index } = indexOver(4, many);
  const typo = await index.search("reinforcment ");
  assert.equal(typo.suggest, "reinforcement");
  assert.deepEqual((await index.docs(typo.docs)).map(function (d) { return d.id; }), ["2606.10001"]);
  assert.equal((await index.search("reinforcement learning ")).suggest, null);
  // a word the index lacks finds its neighbours, and names the best
  const missing = await index.search("reinforcemnt learning ");
  assert.equal(missing.suggest, "reinforcement learning");
  assert.equal(missing.docs.length, 12);
  // a rare word with no much commoner neighbour suggests nothing
  assert.equal((await indexOver(4, many.slice(0, 3)).index.search("reinforcment ")).suggest, null);
});
