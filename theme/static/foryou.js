// PaperTrail 为你推荐, the for-you page's script: the recent papers ranked against the
// reader's seeds, in this browser. Seeds: saved papers and follows (follow.js), an
// imported library (BibTeX, RIS, CSL-JSON, a list of arXiv ids or DOIs) and a shared
// link's ?seed=ID,ID. The profile (imported entries, removed seeds, mutes) lives in
// localStorage only; nothing is sent anywhere. The data: recommend/meta.json.gz and
// recommend/vectors.bin.gz (docs/RECOMMEND.md, made by pipeline/site/index/recommend.py, whose
// score() mirrors rank() here). Text only.
import { fnv1a, tokens } from "./engine.js";
import { card, local } from "./cards.js";
import * as follows from "./follow.js";
import { fetchBytes, index } from "./site.js";

var KEY = "papertrail.foryou";
var PAGE = 20;
var FOLLOW_PAPERS = 50;  // a follow stands for the centroid of its newest matches
var SEED_TERMS = 12;
var MUTE_KINDS = ["author", "category", "topic"];
var ID = /(?:^|[^0-9])([0-9]{4}\.[0-9]{4,5})(?:v[0-9]+)?(?![0-9])|\b([a-z][a-z.-]*\/[0-9]{7})\b/i;
var DOI = /\b(10\.[0-9]{4,9}\/[^\s"<>{}]+)/i;

// -- the profile -------------------------------------------------------------------------
function emptyProfile() { return { imported: [], removed: [], muted: [] }; }
function str(x, max) { return typeof x === "string" && x.length <= max && !/\p{Cs}/u.test(x); }
function validEntry(e) {
  return e && str(e.title || "", 2000) && str(e.text || "", 20000) &&
    (e.id === undefined || (str(e.id, 64) && ID.test(e.id))) &&
    (e.doi === undefined || str(e.doi, 300)) && (e.id || e.doi || e.title);
}
function validMute(m) { return m && MUTE_KINDS.indexOf(m.kind) >= 0 && str(m.value, 500) && m.value; }
function clean(p) {
  p = p && typeof p === "object" ? p : {};
  return {
    imported: (Array.isArray(p.imported) ? p.imported : []).filter(validEntry).map(function (e) {
      var out = { title: e.title || "", text: e.text || "" };
      if (e.id) out.id = e.id.toLowerCase();
      if (e.doi) out.doi = e.doi.toLowerCase();
      return out;
    }),
    removed: (Array.isArray(p.removed) ? p.removed : []).filter(function (k) { return str(k, 400); }),
    muted: (Array.isArray(p.muted) ? p.muted : []).filter(validMute).map(function (m) {
      return { kind: m.kind, value: m.value };
    })
  };
}
function readProfile() {
  try {
    return clean(JSON.parse(localStorage.getItem(KEY) || "{}"));
  } catch {
    return emptyProfile();
  }
}
function writeProfile(p) { localStorage.setItem(KEY, JSON.stringify(clean(p))); }

// -- the data --------------------------------------------------------------------------
function loadData() {
  return Promise.all([fetchBytes("recommend/meta.json.gz"),
    fetchBytes("recommend/vectors.bin.gz")]).then(function (got) {
    var m = JSON.parse(new TextDecoder().decode(got[0]));
    var buf = got[1], n = m.count, d = m.dims, at = 0;
    var take = function (Type, count) {
      var a = new Type(buf, at, count);
      at += count * Type.BYTES_PER_ELEMENT;
      return a;
    };
    var w = { meta: m, n: n, dims: d, titleKeys: take(Uint32Array, n),
      terms: take(Uint16Array, n * m.terms), rows: take(Int8Array, n * d),
      words: take(Int8Array, m.vocab.length * d), row: {}, doi: {}, title: {}, word: {} };
    m.ids.forEach(function (id, i) { w.row[id] = i; });
    Object.keys(m.doi).forEach(function (i) { w.doi[m.doi[i]] = Number(i); });
    for (var i = 0; i < n; i++) w.title[w.titleKeys[i]] = i;
    m.vocab.forEach(function (t, i) { w.word[t] = i; });
    w.unit = new Float32Array(n * d);  // each row at length 1: a dot product is a cosine
    for (i = 0; i < n; i++) unitInto(w.rows.subarray(i * d, i * d + d), w.unit, i * d);
    return w;
  });
}
function unitInto(v, out, at) {
  var s = 0, i;
  for (i = 0; i < v.length; i++) s += v[i] * v[i];
  s = s > 0 ? 1 / Math.sqrt(s) : 0;
  for (i = 0; i < v.length; i++) out[at + i] = v[i] * s;
}
function unit(v) { var out = new Float32Array(v.length); unitInto(v, out, 0); return out; }

function titleKey(title) { return fnv1a(tokens(title).join(" ")); }

// A text's vector, as index/recommend.py's embed: each vocabulary word's row × (1 + log count) ×
// its weight; and its words, heaviest first, for "shared terms".
function embed(w, text) {
  var counts = {};
  tokens(text || "").forEach(function (t) {
    if (Object.prototype.hasOwnProperty.call(w.word, t)) counts[w.word[t]] = (counts[w.word[t]] || 0) + 1;
  });
  var v = new Float32Array(w.dims), heavy = [];
  Object.keys(counts).forEach(function (k) {
    var i = Number(k), f = (1 + Math.log(counts[k])) * w.meta.weights[i];
    for (var j = 0; j < w.dims; j++) v[j] += w.words[i * w.dims + j] * f;
    heavy.push([f, i]);
  });
  heavy.sort(function (a, b) { return b[0] - a[0] || a[1] - b[1]; });
  return { vector: v, terms: heavy.slice(0, SEED_TERMS).map(function (x) { return x[1]; }) };
}
function rowTerms(w, r) {
  var out = [];
  for (var j = 0; j < w.meta.terms; j++) {
    var t = w.terms[r * w.meta.terms + j];
    if (t !== 0xffff) out.push(t);
  }
  return out;
}
function rowVector(w, r) { return w.unit.subarray(r * w.dims, r * w.dims + w.dims); }

// -- seeds -------------------------------------------------------------------------------
// A seed: {key, kind, label, id?, rows (window rows it stands for), vector, terms}.
function arxivId(text) {
  var m = ID.exec(text || "");
  return m ? (m[1] || m[2]).toLowerCase() : null;
}
function doiOf(text) {
  var m = DOI.exec(text || "");
  return m ? m[1].replace(/[.,;]+$/, "").toLowerCase() : null;
}
// An entry of a library matched to a recent paper: by arXiv id (arXiv's own DOIs,
// 10.48550/arXiv.ID, name one), by DOI, then by its title's words.
function match(w, e) {
  var id = e.id || (e.doi && /^10\.48550\/arxiv\./.test(e.doi) ? e.doi.slice(15) : null);
  if (id && id in w.row) return w.row[id];
  if (e.doi && e.doi in w.doi) return w.doi[e.doi];
  if (e.title) {
    var r = w.title[titleKey(e.title)];
    if (r !== undefined) return r;
  }
  return null;
}
function fromEntry(w, e, key, kind) {
  var r = match(w, e);
  if (r !== null) {
    return { key: key, kind: kind, label: e.title || w.meta.ids[r], id: w.meta.ids[r], rows: [r],
      vector: rowVector(w, r), terms: rowTerms(w, r) };
  }
  var made = embed(w, e.title + "\n" + (e.text || ""));
  return { key: key, kind: kind, label: e.title || e.id || e.doi, id: e.id, rows: [],
    vector: made.vector, terms: made.terms };
}
function entryKey(e) { return e.id ? "arxiv:" + e.id : e.doi ? "doi:" + e.doi : "title:" + titleKey(e.title); }

// A follow stands for its newest matches in the window (follow.js finds them).
function followSeeds(w) {
  if (!follows.read().length) return Promise.resolve([]);
  var first = w.meta.first_doc;
  return follows.feed().catch(function () { return []; }).then(function (items) {
    return follows.read().map(function (f) {
      var rows = [];
      items.forEach(function (x) {
        var r = x.entry.doc - first;
        if (r >= 0 && r < w.n && rows.length < FOLLOW_PAPERS && x.why.some(function (g) {
          return g.kind === f.kind && g.value === f.value;
        })) rows.push(r);
      });
      var key = "follow:" + f.kind + ":" + f.value, label = shownName(f.kind, f.value);
      if (!rows.length) {
        if (f.kind !== "query") return null;
        var made = embed(w, f.value);
        return { key: key, kind: "follow", label: label, rows: [], vector: made.vector, terms: made.terms };
      }
      var v = new Float32Array(w.dims), counts = {};
      rows.forEach(function (r) {
        var u = rowVector(w, r);
        for (var j = 0; j < w.dims; j++) v[j] += u[j];
        rowTerms(w, r).forEach(function (t) { counts[t] = (counts[t] || 0) + 1; });
      });
      var terms = Object.keys(counts).map(Number).sort(function (a, b) {
        return counts[b] - counts[a] || a - b;
      }).slice(0, SEED_TERMS);
      return { key: key, kind: "follow", label: label, rows: rows, vector: v, terms: terms };
    }).filter(Boolean);
  });
}

function savedSeeds(w) {
  return follows.readSaved().map(function (x) {
    var abstract = /abstract\s*=\s*\{([^}]*)\}/i.exec(x.bibtex || "");
    return fromEntry(w, { id: x.id.toLowerCase(), title: x.title, text: abstract ? abstract[1] : "" },
      "arxiv:" + x.id.toLowerCase(), "saved");
  });
}

// A seed from an entry that names only an id older than the window: the title the
// search index holds for it, placed by its words; none when the site lacks the paper.
function resolve(w, e, key, kind) {
  if (!e.id || e.title || e.text || match(w, e) !== null) return Promise.resolve(fromEntry(w, e, key, kind));
  return index.search(e.id + " ").then(function (r) { return index.docs(r.docs.slice(0, 8)); })
    .then(function (found) {
      var d = found.filter(function (x) { return x.id === e.id; })[0];
      return fromEntry(w, { id: e.id, title: d ? d.title : "", text: "" }, key, kind);
    }, function () { return fromEntry(w, e, key, kind); });
}

function linkSeeds(w, ids) {
  return Promise.all(ids.map(function (id) {
    return resolve(w, { id: id, title: "", text: "" }, "arxiv:" + id, "link");
  }));
}

// A seed known only by its id takes its title from the search index.
function labelled(w, seeds) {
  var need = seeds.filter(function (s) { return s.rows.length === 1 && s.label === s.id; });
  if (!need.length) return Promise.resolve(seeds);
  return index.docs(need.map(function (s) { return w.meta.first_doc + s.rows[0]; }))
    .then(function (docs) {
      docs.forEach(function (d, i) { if (d) need[i].label = d.title; });
      return seeds;
    }, function () { return seeds; });
}

function linkIds() {
  var raw = new URLSearchParams(location.search).get("seed");
  if (!raw) return null;
  var out = [];
  raw.split(",").forEach(function (part) {
    var id = arxivId(part.trim());
    if (id && out.indexOf(id) < 0 && out.length < 200) out.push(id);
  });
  return out;
}

function usable(s) {
  for (var j = 0; j < s.vector.length; j++) if (s.vector[j] !== 0) return true;
  return false;
}

// -- ranking: recommend.score's mirror ----------------------------------------------
// Half the cosine with the seeds' centroid, half with the closest seed.
function rank(w, seeds) {
  var d = w.dims, units = seeds.map(function (s) { return unit(s.vector); });
  var centroid = new Float32Array(d);
  units.forEach(function (u) { for (var j = 0; j < d; j++) centroid[j] += u[j] / units.length; });
  centroid = unit(centroid);
  var own = {};
  seeds.forEach(function (s) { s.rows.forEach(function (r) { own[r] = 1; }); });
  var out = [];
  for (var r = 0; r < w.n; r++) {
    if (own[r]) continue;
    var base = r * d, c = 0, best = -2, closest = 0;
    for (var j = 0; j < d; j++) c += w.unit[base + j] * centroid[j];
    for (var k = 0; k < units.length; k++) {
      var u = units[k], sim = 0;
      for (j = 0; j < d; j++) sim += w.unit[base + j] * u[j];
      if (sim > best) { best = sim; closest = k; }
    }
    out.push({ row: r, score: Math.round((0.5 * c + 0.5 * best) * 1e6) / 1e6, seed: closest });
  }
  out.sort(function (a, b) { return b.score - a.score || b.row - a.row; });
  return out;
}

// -- library files -------------------------------------------------------------------
// Each reader returns entries {id?, doi?, title, text}; text is the abstract, if any.
function entry(fields) {
  var e = { title: (fields.title || "").replace(/[{}]/g, "").replace(/\s+/g, " ").trim().slice(0, 2000),
    text: (fields.text || "").replace(/[{}]/g, "").replace(/\s+/g, " ").trim().slice(0, 20000) };
  var id = fields.arxiv || arxivId(fields.url || "") ||
    arxivId(/arxiv/i.test(fields.journal || "") ? fields.journal : "");
  var doi = doiOf(fields.doi || "");
  if (!id && doi && /^10\.48550\/arxiv\./.test(doi)) id = arxivId(doi.slice(15));
  if (id) e.id = id;
  if (doi) e.doi = doi;
  return e.id || e.doi || e.title ? e : null;
}

// BibTeX: each @type{key, field = {…} | "…" | word, …}; braces nest.
function bibtex(text) {
  var out = [], re = /@\s*([a-z]+)\s*[{(]/gi, m;
  while ((m = re.exec(text))) {
    if (/^(comment|string|preamble)$/i.test(m[1])) continue;
    var fields = {}, i = re.lastIndex, depth = 1, start = i;
    while (i < text.length && depth > 0) {
      if (text[i] === "{" || text[i] === "(") depth++;
      else if (text[i] === "}" || text[i] === ")") depth--;
      i++;
    }
    var body = text.slice(start, i - 1), f = /([a-z_-]+)\s*=\s*/gi, fm;
    while ((fm = f.exec(body))) {
      var j = f.lastIndex, value = "";
      if (body[j] === "{") {
        var dd = 0, s = j;
        for (; j < body.length; j++) {
          if (body[j] === "{") dd++;
          else if (body[j] === "}" && --dd === 0) break;
        }
        value = body.slice(s + 1, j);
      } else if (body[j] === '"') {
        var e2 = body.indexOf('"', j + 1);
        value = body.slice(j + 1, e2 < 0 ? body.length : e2);
        j = e2 < 0 ? body.length : e2;
      } else {
        value = /^[^,]*/.exec(body.slice(j))[0];
      }
      fields[fm[1].toLowerCase()] = value;
      f.lastIndex = j + 1;
    }
    re.lastIndex = i;
    var ep = fields.eprint && (!fields.archiveprefix || /arxiv/i.test(fields.archiveprefix)) ? arxivId(fields.eprint) : null;
    var got = entry({ title: fields.title, text: fields.abstract, doi: fields.doi, url: fields.url,
      arxiv: ep, journal: fields.journal || fields.note });
    if (got) out.push(got);
  }
  return out;
}

// RIS: "TY  - " opens a record, "ER  - " closes it; TI/T1 title, AB/N2 abstract, DO doi,
// UR url.
function ris(text) {
  var out = [], cur = null;
  text.split(/\r?\n/).forEach(function (line) {
    var m = /^([A-Z][A-Z0-9]) {2}-\s?(.*)$/.exec(line);
    if (!m) return;
    if (m[1] === "TY") cur = {};
    else if (m[1] === "ER") {
      if (cur) { var e = entry(cur); if (e) out.push(e); }
      cur = null;
    } else if (cur) {
      var k = { TI: "title", T1: "title", AB: "text", N2: "text", DO: "doi", UR: "url", JO: "journal", T2: "journal" }[m[1]];
      if (k && !cur[k]) cur[k] = m[2];
    }
  });
  return out;
}

// CSL-JSON (Zotero's): an array of items with title, abstract, DOI, URL, number.
function csl(items) {
  return items.map(function (it) {
    if (!it || typeof it !== "object") return null;
    var s = function (x) { return typeof x === "string" ? x : ""; };
    return entry({ title: s(it.title), text: s(it.abstract), doi: s(it.DOI), url: s(it.URL),
      arxiv: arxivId(s(it.number)) || arxivId(s(it.id)) });
  }).filter(Boolean);
}

// A plain list: one arXiv id (or URL) or DOI a line.
function plain(text) {
  return text.split(/\r?\n/).map(function (line) {
    var id = arxivId(line), doi = doiOf(line);
    return id || doi ? entry({ arxiv: id, doi: doi }) : null;
  }).filter(Boolean);
}

// What a file holds: a profile or follow export, or a library's entries.
function read(text) {
  var trimmed = text.replace(/^\ufeff/, "").trim();
  if (/^[[{]/.test(trimmed)) {
    var data = JSON.parse(trimmed);
    if (data && !Array.isArray(data) && (data.papertrail_profile || data.papertrail_follows)) {
      return { profile: data };
    }
    return { entries: csl(Array.isArray(data) ? data : data.items || []) };
  }
  if (/^TY {2}- /m.test(trimmed)) return { entries: ris(trimmed) };
  if (/@\s*[a-z]+\s*[{(]/i.test(trimmed)) return { entries: bibtex(trimmed) };
  return { entries: plain(trimmed) };
}

// -- the page --------------------------------------------------------------------------
var box = document.getElementById("foryou");
var list = document.getElementById("foryou-results");
var status = document.getElementById("foryou-status");
var more = document.getElementById("foryou-more");
var seedList = document.getElementById("foryou-seeds");
var mutedList = document.getElementById("foryou-muted");
var importStatus = document.getElementById("foryou-import-status");
var topicNames = JSON.parse(box.dataset.topicNames || "{}");
var shared = linkIds();
var data = null;
var generation = 0;  // a render started later wins

function fmt(template, values) {
  return template.replace(/\{(\w+)\}/g, function (all, k) { return k in values ? values[k] : all; });
}
function button(text, onClick, label) {
  var b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  if (label) b.setAttribute("aria-label", label);
  b.addEventListener("click", onClick);
  return b;
}
// A topic by its name in the site's language, never its slug.
function shownName(kind, value) {
  return kind === "topic" && Object.prototype.hasOwnProperty.call(topicNames, value) ? topicNames[value] : value;
}
function kindLabel(kind) { return box.dataset["kind" + kind[0].toUpperCase() + kind.slice(1)]; }

function gather(w) {
  if (shared) return linkSeeds(w, shared);
  var p = readProfile();
  var gone = {};
  p.removed.forEach(function (k) { gone[k] = 1; });
  return Promise.all([followSeeds(w), Promise.all(p.imported.map(function (e) {
    return resolve(w, e, entryKey(e), "import");
  }))]).then(function (got) {
    var seeds = savedSeeds(w).concat(got[0], got[1]);
    var seen = {};
    return seeds.filter(function (s) {
      if (gone[s.key] || seen[s.key]) return false;
      seen[s.key] = 1;
      return true;
    });
  });
}

function removeSeed(s) {
  var p = readProfile();
  if (s.kind === "import") {
    p.imported = p.imported.filter(function (e) { return entryKey(e) !== s.key; });
  } else if (p.removed.indexOf(s.key) < 0) {
    p.removed.push(s.key);  // a saved paper or a follow stays where it is, unused here
  }
  writeProfile(p);
  render();
}

function showSeeds(seeds) {
  seedList.textContent = "";
  document.getElementById("foryou-seeds-none").textContent = seeds.length ? "" : box.dataset.none;
  seeds.forEach(function (s) {
    var li = document.createElement("li");
    li.dataset.key = s.key;
    var kind = document.createElement("span");
    kind.className = "kind";
    kind.textContent = kindLabel(s.kind);
    var name = document.createElement("bdi");
    name.textContent = s.label;  // never markup: imported titles are text
    li.append(kind, " ", name);
    if (s.id) li.append(" · arXiv:" + s.id);
    if (!shared) li.append(" ", button(box.dataset.remove, function () { removeSeed(s); },
      box.dataset.remove + " · " + s.label));
    seedList.appendChild(li);
  });
  var share = document.getElementById("foryou-share");
  var ids = seeds.map(function (s) { return s.id; }).filter(Boolean);
  share.hidden = shared !== null || !ids.length;
  share.href = "?seed=" + ids.map(encodeURIComponent).join(",");
}

function showMuted() {
  var p = readProfile();
  mutedList.textContent = "";
  if (!p.muted.length) {
    var none = document.createElement("li");
    none.className = "note";
    none.textContent = box.dataset.mutedNone;
    mutedList.appendChild(none);
  }
  p.muted.forEach(function (m) {
    var li = document.createElement("li");
    var kind = document.createElement("span");
    kind.className = "kind";
    kind.textContent = kindLabel(m.kind);
    var name = document.createElement("bdi");
    name.textContent = shownName(m.kind, m.value);
    li.append(kind, " ", name, " ", button(box.dataset.unmute, function () {
      var q = readProfile();
      q.muted = q.muted.filter(function (x) { return !(x.kind === m.kind && x.value === m.value); });
      writeProfile(q);
      render();
    }, box.dataset.unmute + " · " + shownName(m.kind, m.value)));
    mutedList.appendChild(li);
  });
}

function mute(kind, value) {
  var p = readProfile();
  if (!p.muted.some(function (m) { return m.kind === kind && m.value === value; })) {
    p.muted.push({ kind: kind, value: value });
  }
  writeProfile(p);
  render();
}

function isMuted(d, muted) {
  return muted.some(function (m) {
    if (m.kind === "author") return d.authors.indexOf(m.value) >= 0;
    if (m.kind === "category") return d.categories.indexOf(m.value) >= 0;
    return d.topics.indexOf(m.value) >= 0;
  });
}

function related(w, terms, vector) {
  var u = unit(vector);
  return terms.map(function (t) {
    var s = 0;
    for (var j = 0; j < w.dims; j++) s += w.words[t * w.dims + j] * u[j];
    return [s * w.meta.weights[t], t];  // its part in the paper's vector, toward the seed
  }).filter(function (x) { return x[0] > 0; }).sort(function (a, b) {
    return b[0] - a[0] || a[1] - b[1];
  }).slice(0, 3).map(function (x) { return x[1]; });
}

function why(w, item, seed, d) {
  var p = document.createElement("p");
  p.className = "why";
  var closest = document.createElement("bdi");
  closest.textContent = seed.label;
  p.append(box.dataset.closest, closest);
  var mine = rowTerms(w, item.row), label = box.dataset.terms;
  var common = seed.terms.filter(function (t) { return mine.indexOf(t) >= 0; });
  if (!common.length) {  // no word in common: the paper's words nearest the seed's
    common = related(w, mine, seed.vector);
    label = box.dataset.related;
  }
  if (common.length) {
    p.append(" · " + label);
    common.forEach(function (t, i) {
      var term = document.createElement("span");
      term.className = "term";
      term.textContent = w.meta.vocab[t];
      p.append(i ? ", " : "", term);
    });
  }
  var mutes = document.createElement("p");
  mutes.className = "mutes";
  var targets = [["category", d.categories[0]], ["author", d.authors[0]]].concat(
    d.topics.map(function (t) { return ["topic", t]; }));
  targets.filter(function (t) { return t[1]; }).forEach(function (t) {
    var text = box.dataset.mute + " " + kindLabel(t[0]) + " · " + shownName(t[0], t[1]);
    mutes.append(button(text, function () { mute(t[0], t[1]); }), " ");
  });
  return [p, mutes];
}

// The next PAGE results that no mute hides, as cards with why and the mute buttons.
function showFrom(w, ranked, seeds, start, run) {
  var muted = shared ? [] : readProfile().muted;
  var shown = 0, at = start;
  function step() {
    if (run !== generation) return Promise.resolve();
    if (shown >= PAGE || at >= ranked.length) {
      more.hidden = at >= ranked.length;
      more.textContent = fmt(box.dataset.more, { n: PAGE });
      more.onclick = function () { showFrom(w, ranked, seeds, at, run); };
      list.dataset.ready = "1";
      return Promise.resolve();
    }
    var batch = ranked.slice(at, at + PAGE * 2);
    at += batch.length;
    return index.docs(batch.map(function (x) { return w.meta.first_doc + x.row; })).then(function (docs) {
      if (run !== generation) return;
      var used = batch.length;
      for (var i = 0; i < docs.length; i++) {
        if (shown >= PAGE) { used = i; break; }
        var d = docs[i];
        if (!d || isMuted(d, muted)) continue;
        var item = batch[i];
        var li = card(d, { tldr: true, meta: "arXiv:" + d.id + " · " + local(d.first_seen) +
          " · " + d.categories.join(" ") });
        why(w, item, seeds[item.seed], d).forEach(function (n) { li.appendChild(n); });
        list.appendChild(li);
        shown++;
      }
      at += used - batch.length;  // the rest of the batch comes first next time
      return step();
    });
  }
  return step();
}

function render() {
  var run = ++generation;
  list.dataset.ready = "";
  showMuted();
  return (data || (data = loadData())).then(function (w) {
    return index.manifest().then(function () { return gather(w); }).then(function (seeds) {
      return labelled(w, seeds);
    }).then(function (seeds) {
      if (run !== generation) return;
      showSeeds(seeds);
      seeds = seeds.filter(usable);
      list.textContent = "";
      more.hidden = true;
      if (!seeds.length || !w.n) {
        status.textContent = w.n ? box.dataset.none : box.dataset.empty;
        list.dataset.ready = "1";
        return;
      }
      var ranked = rank(w, seeds);
      status.textContent = fmt(box.dataset.status, { n: seeds.length, count: ranked.length });
      return showFrom(w, ranked, seeds, 0, run);
    });
  }).catch(function (err) {
    status.textContent = String(err.message || err);
    list.dataset.ready = "1";
  });
}

function importFile(ev) {
  var file = ev.target.files[0];
  if (!file) return;
  file.text().then(function (text) {
    var got = read(text);
    ev.target.value = "";
    if (got.profile) {
      var p = readProfile(), q = clean(got.profile.foryou);
      follows.merge(got.profile);
      q.imported.forEach(function (e) {
        if (!p.imported.some(function (x) { return entryKey(x) === entryKey(e); })) p.imported.push(e);
      });
      q.removed.forEach(function (k) { if (p.removed.indexOf(k) < 0) p.removed.push(k); });
      q.muted.forEach(function (m) {
        if (!p.muted.some(function (x) { return x.kind === m.kind && x.value === m.value; })) p.muted.push(m);
      });
      writeProfile(p);
      importStatus.textContent = "";
      return render();
    }
    if (!got.entries.length) {
      importStatus.textContent = box.dataset.importNone;
      return;
    }
    return addEntries(got.entries);
  }).catch(function (err) { importStatus.textContent = String(err.message || err); });
}

function addEntries(entries) {
  return (data || (data = loadData())).then(function (w) {
    var p = readProfile(), matched = 0;
    entries.forEach(function (e) {
      if (match(w, e) !== null) matched++;
      var k = entryKey(e);
      p.removed = p.removed.filter(function (x) { return x !== k; });
      if (!p.imported.some(function (x) { return entryKey(x) === k; })) p.imported.push(e);
    });
    writeProfile(p);
    importStatus.textContent = fmt(box.dataset.imported, { n: entries.length, matched: matched });
    return render();
  });
}

document.getElementById("foryou-import").addEventListener("change", importFile);
document.getElementById("foryou-export").addEventListener("click", function () {
  follows.download("papertrail-profile.json", "application/json", JSON.stringify({
    papertrail_profile: 1, papertrail_follows: 1, follows: follows.read(), saved: follows.readSaved(),
    foryou: readProfile() }, null, 1));
});
var reset = document.getElementById("foryou-reset");
reset.addEventListener("click", function () {
  if (!window.confirm(reset.dataset.confirm)) return;
  writeProfile(emptyProfile());
  importStatus.textContent = "";
  render();
});
if (shared) {
  document.getElementById("foryou-shared").hidden = false;
  document.getElementById("foryou-shared-note").textContent = fmt(box.dataset.shared, { n: shared.length });
  document.getElementById("foryou-keep").addEventListener("click", function () {
    var ids = shared;
    shared = null;
    document.getElementById("foryou-shared").hidden = true;
    history.replaceState(null, "", location.pathname);
    addEntries(ids.map(function (id) { return { id: id, title: "", text: "" }; }));
  });
}
render();
