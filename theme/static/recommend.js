// 为你推荐's reckoning, without the page: the reader's profile and its merges, a library
// file read into entries (BibTeX, RIS, CSL-JSON, a list of arXiv ids or DOIs), the window
// of recent papers (recommend/meta.json.gz and vectors.bin.gz, made by
// pipeline/site/index/recommend.py) and the ranking that mirrors its score(). Pure: no
// DOM, no storage, no network; foryou.js is the page, tests/js/recommend.test.mjs the tests.
import { scan } from "./bibtex.js";
import { fnv1a, tokens } from "./engine.js";

const SEED_TERMS = 12;
export const MUTE_KINDS = ["author", "category", "topic"];
// A library file larger than this is refused before it is read: the profile lives in
// localStorage (about 5 MB for the whole site), and reading is all in this tab.
export const MAX_IMPORT_BYTES = 10 * 1024 * 1024;
// Seeds the ranking compares each paper with (its cost grows with their number): saved
// papers and follows first, then the library in file order.
export const MAX_SEEDS = 500;
// A shared link's seeds, at most.
export const MAX_LINK_SEEDS = 200;
const ID = /(?:^|[^0-9])([0-9]{4}\.[0-9]{4,5})(?:v[0-9]+)?(?![0-9])|\b([a-z][a-z.-]*\/[0-9]{7})\b/i;
const DOI = /\b(10\.[0-9]{4,9}\/[^\s"<>{}]+)/i;

export function arxivId(text) {
  const m = ID.exec(text || "");
  return m ? (m[1] || m[2]).toLowerCase() : null;
}
export function doiOf(text) {
  const m = DOI.exec(text || "");
  return m ? m[1].replace(/[.,;]+$/, "").toLowerCase() : null;
}
export function titleKey(title) { return fnv1a(tokens(title).join(" ")); }
export function entryKey(e) {
  return e.id ? "arxiv:" + e.id : e.doi ? "doi:" + e.doi : "title:" + titleKey(e.title);
}
function muteKey(m) { return m.kind + "\n" + m.value; }

// -- the profile: {imported: entries, removed: seed keys, muted: [{kind, value}]} ----------
export function emptyProfile() { return { imported: [], removed: [], muted: [] }; }
function str(x, max) { return typeof x === "string" && x.length <= max && !/\p{Cs}/u.test(x); }
function validEntry(e) {
  return e && str(e.title || "", 2000) && str(e.text || "", 20000) &&
    (e.id === undefined || (str(e.id, 64) && ID.test(e.id))) &&
    (e.doi === undefined || str(e.doi, 300)) && (e.id || e.doi || e.title);
}
function validMute(m) { return m && MUTE_KINDS.indexOf(m.kind) >= 0 && str(m.value, 500) && m.value; }
// A profile as stored: only what validates (storage and import files are hand-editable).
export function clean(p) {
  p = p && typeof p === "object" ? p : {};
  return {
    imported: (Array.isArray(p.imported) ? p.imported : []).filter(validEntry).map(function (e) {
      const out = { title: e.title || "", text: e.text || "" };
      if (e.id) out.id = e.id.toLowerCase();
      if (e.doi) out.doi = e.doi.toLowerCase();
      return out;
    }),
    removed: (Array.isArray(p.removed) ? p.removed : []).filter(function (k) { return str(k, 400); }),
    muted: (Array.isArray(p.muted) ? p.muted : []).filter(validMute).map(function (m) {
      return { kind: m.kind, value: m.value };
    }),
  };
}

// Items of both lists, each once by its key, the first's order then the second's new ones:
// one pass through a Map, so a library of 20,000 entries merges as fast as one of 20.
export function union(first, second, key) {
  const out = new Map();
  first.concat(second).forEach(function (x) { if (!out.has(key(x))) out.set(key(x), x); });
  return Array.from(out.values());
}
function same(x) { return x; }

// A library's entries added to a profile, no longer among its removed seeds.
export function withEntries(p, entries) {
  const added = new Set(entries.map(entryKey));
  return { imported: union(p.imported, entries, entryKey),
    removed: p.removed.filter(function (k) { return !added.has(k); }), muted: p.muted };
}
// An exported profile's lists added to this one's: what is here stays as it is.
export function merged(p, q) {
  return { imported: union(p.imported, q.imported, entryKey), removed: union(p.removed, q.removed, same),
    muted: union(p.muted, q.muted, muteKey) };
}
export function withMute(muted, m) { return union(muted, [m], muteKey); }
export function withoutMute(muted, m) {
  return muted.filter(function (x) { return muteKey(x) !== muteKey(m); });
}
export function isMuted(d, muted) {
  return muted.some(function (m) {
    if (m.kind === "author") return d.authors.indexOf(m.value) >= 0;
    if (m.kind === "category") return d.categories.indexOf(m.value) >= 0;
    return d.topics.indexOf(m.value) >= 0;
  });
}

// A shared link's ?seed=ID,ID: its arXiv ids, each once, MAX_LINK_SEEDS at most; null
// when the page has no link's seeds.
export function linkIds(search) {
  const raw = new URLSearchParams(search).get("seed");
  if (!raw) return null;
  const out = new Set();
  raw.split(",").forEach(function (part) {
    const id = arxivId(part.trim());
    if (id && out.size < MAX_LINK_SEEDS) out.add(id);
  });
  return Array.from(out);
}

// -- library files -------------------------------------------------------------------------
// Each reader returns entries {id?, doi?, title, text}; text is the abstract, if any.
function entry(fields) {
  const e = { title: (fields.title || "").replace(/[{}]/g, "").replace(/\s+/g, " ").trim().slice(0, 2000),
    text: (fields.text || "").replace(/[{}]/g, "").replace(/\s+/g, " ").trim().slice(0, 20000) };
  let id = fields.arxiv || arxivId(fields.url || "") ||
    arxivId(/arxiv/i.test(fields.journal || "") ? fields.journal : "");
  const doi = doiOf(fields.doi || "");
  if (!id && doi && /^10\.48550\/arxiv\./.test(doi)) id = arxivId(doi.slice(15));
  if (id) e.id = id;
  if (doi) e.doi = doi;
  return e.id || e.doi || e.title ? e : null;
}

// BibTeX (bibtex.js reads the entries): title, abstract, doi, url, an arXiv eprint, or
// an arXiv id in journal or note.
export function bibtex(text) {
  const out = [];
  scan(text).forEach(function (x) {
    const f = x.fields;
    const ep = f.eprint && (!f.archiveprefix || /arxiv/i.test(f.archiveprefix)) ? arxivId(f.eprint) : null;
    const got = entry({ title: f.title, text: f.abstract, doi: f.doi, url: f.url, arxiv: ep,
      journal: f.journal || f.note });
    if (got) out.push(got);
  });
  return out;
}

// RIS: "TY  - " opens a record, "ER  - " closes it; TI/T1 title, AB/N2 abstract, DO doi,
// UR url.
const RIS_KEYS = { TI: "title", T1: "title", AB: "text", N2: "text", DO: "doi", UR: "url", JO: "journal",
  T2: "journal" };
export function ris(text) {
  const out = [];
  let cur = null;
  text.split(/\r?\n/).forEach(function (line) {
    const m = /^([A-Z][A-Z0-9]) {2}-\s?(.*)$/.exec(line);
    if (!m) return;
    if (m[1] === "TY") cur = {};
    else if (m[1] === "ER") {
      const e = cur && entry(cur);
      if (e) out.push(e);
      cur = null;
    } else if (cur) {
      const k = RIS_KEYS[m[1]];
      if (k && !cur[k]) cur[k] = m[2];
    }
  });
  return out;
}

// CSL-JSON (Zotero's): an array of items with title, abstract, DOI, URL, number.
export function csl(items) {
  const s = function (x) { return typeof x === "string" ? x : ""; };
  return items.map(function (it) {
    if (!it || typeof it !== "object") return null;
    return entry({ title: s(it.title), text: s(it.abstract), doi: s(it.DOI), url: s(it.URL),
      arxiv: arxivId(s(it.number)) || arxivId(s(it.id)) });
  }).filter(Boolean);
}

// A plain list: one arXiv id (or URL) or DOI a line.
export function plain(text) {
  return text.split(/\r?\n/).map(function (line) {
    const id = arxivId(line), doi = doiOf(line);
    return id || doi ? entry({ arxiv: id, doi: doi }) : null;
  }).filter(Boolean);
}

// What a file holds: a profile or follow export ({profile}), or a library's entries.
export function read(text) {
  const trimmed = text.replace(/^\ufeff/, "").trim();
  if (/^[[{]/.test(trimmed)) {
    const data = JSON.parse(trimmed);
    if (data && !Array.isArray(data) && (data.papertrail_profile || data.papertrail_follows)) {
      return { profile: data };
    }
    return { entries: csl(Array.isArray(data) ? data : (data && data.items) || []) };
  }
  if (/^TY {2}- /m.test(trimmed)) return { entries: ris(trimmed) };
  if (/@\s*[a-z]+\s*[{(]/i.test(trimmed)) return { entries: bibtex(trimmed) };
  return { entries: plain(trimmed) };
}

// -- the window of recent papers ------------------------------------------------------------
// meta.json and vectors.bin (docs/RECOMMEND.md) as the arrays and lookups ranking uses.
export function windowOf(m, buf) {
  const n = m.count, d = m.dims;
  let at = 0;
  const take = function (Type, count) {
    const a = new Type(buf, at, count);
    at += count * Type.BYTES_PER_ELEMENT;
    return a;
  };
  const w = { meta: m, n: n, dims: d, titleKeys: take(Uint32Array, n),
    terms: indices(take(Uint8Array, n * m.terms), take(Uint8Array, n * m.terms), m.terms), termWeights: take(Uint8Array, n * m.terms),
    idf: take(Uint8Array, m.vocab.length), rows: take(Int8Array, n * d),
    words: take(Int8Array, m.vectors * d), row: {}, doi: {}, title: {}, word: new Map() };
  m.ids.forEach(function (id, i) { w.row[id] = i; });
  Object.keys(m.doi).forEach(function (i) { w.doi[m.doi[i]] = Number(i); });
  for (let i = 0; i < n; i++) w.title[w.titleKeys[i]] = i;
  m.vocab.forEach(function (t, i) { w.word.set(t, i); });
  w.unit = new Float32Array(n * d);  // each row at length 1: a dot product is a cosine
  for (let i = 0; i < n; i++) unitInto(w.rows.subarray(i * d, i * d + d), w.unit, i * d);
  w.norm = new Float32Array(n);  // each row's words at length 1, likewise
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = 0; j < m.terms; j++) s += w.termWeights[i * m.terms + j] ** 2;
    w.norm[i] = s > 0 ? 1 / Math.sqrt(s) : 0;
  }
  return w;
}
// Each paper's terms, stored as steps from the one before (the first from 0; 0xffff after
// the last), their high bytes apart from their low bytes, as their indices: ascending,
// 0xffff after the last.
function indices(high, low, k) {
  const out = new Uint16Array(high.length);
  for (let at = 0; at < high.length; at += k) {
    let t = 0;
    for (let j = 0; j < k; j++) {
      const step = high[at + j] << 8 | low[at + j];
      if (step === 0xffff) { out.fill(0xffff, at + j, at + k); break; }
      t += step;
      out[at + j] = t;
    }
  }
  return out;
}
function unitInto(v, out, at) {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  s = s > 0 ? 1 / Math.sqrt(s) : 0;
  for (let i = 0; i < v.length; i++) out[at + i] = v[i] * s;
}
export function unit(v) { const out = new Float32Array(v.length); unitInto(v, out, 0); return out; }
// A Map of words to weights at length 1.
function unitWords(m) {
  let s = 0;
  m.forEach(function (v) { s += v * v; });
  const out = new Map();
  if (s > 0) m.forEach(function (v, t) { out.set(t, v / Math.sqrt(s)); });
  return out;
}

// A text placed as index/recommend.py's embed: in the meaning space, each word's row ×
// (1 + log count) × its weight, summed; its words weighted (1 + log count) × IDF; and its
// words, heaviest first, for "shared terms".
export function embed(w, text) {
  const counts = new Map();
  tokens(text || "").forEach(function (t) {  // a stop word is in no vocabulary
    const i = w.word.get(t);
    if (i !== undefined) counts.set(i, (counts.get(i) || 0) + 1);
  });
  const v = new Float32Array(w.dims), words = new Map(), heavy = [];
  counts.forEach(function (c, i) {
    const tf = 1 + Math.log(c);
    if (i < w.meta.vectors) {
      const f = tf * w.meta.weights[i];
      for (let j = 0; j < w.dims; j++) v[j] += w.words[i * w.dims + j] * f;
    }
    const weight = tf * (1 + w.idf[i] / w.meta.idf_step);
    words.set(i, weight);
    heavy.push([weight, i]);
  });
  heavy.sort(function (a, b) { return b[0] - a[0] || a[1] - b[1]; });
  return { vector: v, words: words, terms: heavy.slice(0, SEED_TERMS).map(function (x) { return x[1]; }) };
}
// A row's words that say why it was ranked: its `shown` heaviest (ties to the first).
export function rowTerms(w, r) {
  const out = [];
  rowWords(w, r).forEach(function (q, t) { out.push([q, t]); });
  out.sort(function (a, b) { return b[0] - a[0] || a[1] - b[1]; });
  return out.slice(0, w.meta.shown).map(function (x) { return x[1]; });
}
// A row's words and their weights, as a Map.
export function rowWords(w, r) {
  const out = new Map();
  for (let j = 0; j < w.meta.terms; j++) {
    const t = w.terms[r * w.meta.terms + j];
    if (t === 0xffff) break;
    out.set(t, w.termWeights[r * w.meta.terms + j]);
  }
  return out;
}
export function rowVector(w, r) { return w.unit.subarray(r * w.dims, r * w.dims + w.dims); }

// -- seeds: {key, kind, label, id?, rows (window rows it stands for), placed ("row",
// "text", "rows"), vector, words, terms} ------------------------------------------------------
// An entry of a library matched to a recent paper: by arXiv id (arXiv's own DOIs,
// 10.48550/arXiv.ID, name one), by DOI, then by its title's words.
export function match(w, e) {
  const id = e.id || (e.doi && /^10\.48550\/arxiv\./.test(e.doi) ? e.doi.slice(15) : null);
  if (id && id in w.row) return w.row[id];
  if (e.doi && e.doi in w.doi) return w.doi[e.doi];
  if (e.title) {
    const r = w.title[titleKey(e.title)];
    if (r !== undefined) return r;
  }
  return null;
}
export function fromEntry(w, e, key, kind) {
  const r = match(w, e);
  if (r !== null) {
    return { key: key, kind: kind, label: e.title || w.meta.ids[r], id: w.meta.ids[r], rows: [r],
      placed: "row", vector: rowVector(w, r), words: rowWords(w, r), terms: rowTerms(w, r) };
  }
  const made = embed(w, e.title + "\n" + (e.text || ""));
  return { key: key, kind: kind, label: e.title || e.id || e.doi, id: e.id, rows: [],
    placed: "text", vector: made.vector, words: made.words, terms: made.terms };
}
// A follow's seed: the centroid of the window rows it matched, its terms the rows' commonest.
export function fromRows(w, rows, key, label) {
  const v = new Float32Array(w.dims), counts = {}, words = new Map();
  rows.forEach(function (r) {
    const u = rowVector(w, r);
    for (let j = 0; j < w.dims; j++) v[j] += u[j];
    rowTerms(w, r).forEach(function (t) { counts[t] = (counts[t] || 0) + 1; });
    unitWords(rowWords(w, r)).forEach(function (x, t) { words.set(t, (words.get(t) || 0) + x); });
  });
  const terms = Object.keys(counts).map(Number).sort(function (a, b) {
    return counts[b] - counts[a] || a - b;
  }).slice(0, SEED_TERMS);
  return { key: key, kind: "follow", label: label, rows: rows, placed: "rows", vector: v, words: words,
    terms: terms };
}
export function usable(s) {
  for (let j = 0; j < s.vector.length; j++) if (s.vector[j] !== 0) return true;
  return s.words.size > 0;
}

// -- ranking: recommend.score's mirror ----------------------------------------------------
// Each paper's score by meaning and by words: half its cosine with the seeds' centroid,
// half with the closest seed; each as a z-score over the papers ranked, summed. Each row
// once, best first, ties to the newer, the seeds' own rows left out.
export function rank(w, seeds) {
  const d = w.dims, k = seeds.length, units = seeds.map(function (s) { return unit(s.vector); });
  let centroid = new Float32Array(d);
  units.forEach(function (u) { for (let j = 0; j < d; j++) centroid[j] += u[j] / k; });
  centroid = unit(centroid);
  // Words: which seeds use each word, and how much; the seeds' centroid likewise.
  const bySeed = new Map();
  let middle = new Map();
  seeds.forEach(function (s, i) {
    unitWords(s.words).forEach(function (x, t) {
      if (!bySeed.has(t)) bySeed.set(t, []);
      bySeed.get(t).push(i, x);
      middle.set(t, (middle.get(t) || 0) + x / k);
    });
  });
  middle = unitWords(middle);
  const own = new Set();
  seeds.forEach(function (s) { s.rows.forEach(function (r) { own.add(r); }); });
  const meaning = new Float64Array(w.n), words = new Float64Array(w.n), closest = new Int32Array(w.n);
  const dense = new Float32Array(k), sparse = new Float32Array(k);
  const K = w.meta.terms;
  for (let r = 0; r < w.n; r++) {
    const base = r * d;
    let c = 0;
    for (let j = 0; j < d; j++) c += w.unit[base + j] * centroid[j];
    for (let i = 0; i < k; i++) {
      const u = units[i];
      let sim = 0;
      for (let j = 0; j < d; j++) sim += w.unit[base + j] * u[j];
      dense[i] = sim;
      sparse[i] = 0;
    }
    let toMiddle = 0;
    for (let j = 0; j < K; j++) {
      const t = w.terms[r * K + j];
      if (t === 0xffff) break;
      const q = w.termWeights[r * K + j] * w.norm[r];
      toMiddle += q * (middle.get(t) || 0);
      const users = bySeed.get(t);
      if (users) for (let x = 0; x < users.length; x += 2) sparse[users[x]] += q * users[x + 1];
    }
    let bestDense = -2, bestSparse = -2, best = -4;
    for (let i = 0; i < k; i++) {
      if (dense[i] > bestDense) bestDense = dense[i];
      if (sparse[i] > bestSparse) bestSparse = sparse[i];
      if (dense[i] + sparse[i] > best) { best = dense[i] + sparse[i]; closest[r] = i; }
    }
    meaning[r] = 0.5 * c + 0.5 * bestDense;
    words[r] = 0.5 * toMiddle + 0.5 * bestSparse;
  }
  const zm = zscore(meaning, own), zw = zscore(words, own);
  const out = [];
  for (let r = 0; r < w.n; r++) {
    if (own.has(r)) continue;
    out.push({ row: r, score: Math.round((zm(meaning[r]) + zw(words[r])) * 1e6) / 1e6, seed: closest[r] });
  }
  out.sort(function (a, b) { return b.score - a.score || b.row - a.row; });
  return out;
}
// (x - mean) / std over the rows not in `own` (all rows when every row is own).
function zscore(values, own) {
  let n = 0, sum = 0, sq = 0;
  for (let r = 0; r < values.length; r++) if (!own.has(r) || own.size === values.length) { n++; sum += values[r]; }
  const mean = n ? sum / n : 0;
  for (let r = 0; r < values.length; r++) if (!own.has(r) || own.size === values.length) sq += (values[r] - mean) ** 2;
  const std = n ? Math.sqrt(sq / n) : 0;
  return function (x) { return (x - mean) / (std > 0 ? std : 1); };
}

// A paper's words nearest a seed's vector: what "related terms" names when they share none.
export function related(w, terms, vector) {
  const u = unit(vector);
  return terms.filter(function (t) { return t < w.meta.vectors; }).map(function (t) {
    let s = 0;
    for (let j = 0; j < w.dims; j++) s += w.words[t * w.dims + j] * u[j];
    return [s * w.meta.weights[t], t];  // its part in the paper's vector, toward the seed
  }).filter(function (x) { return x[0] > 0; }).sort(function (a, b) {
    return b[0] - a[0] || a[1] - b[1];
  }).slice(0, 3).map(function (x) { return x[1]; });
}
