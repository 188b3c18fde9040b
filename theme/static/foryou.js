// PaperTrail 为你推荐, the for-you page: the recent papers ranked against the reader's
// seeds, in this browser. Seeds: saved papers and follows (follow.js), an imported library
// and a shared link's ?seed=ID,ID. The profile (imported entries, removed seeds, mutes)
// lives in localStorage only; nothing is sent anywhere. The reckoning is recommend.js's
// (docs/RECOMMEND.md); this module is the page around it. Text only.
import { card, local } from "./cards.js";
import * as follows from "./follow.js";
import {
  MAX_IMPORT_BYTES, MAX_LINK_SEEDS, MAX_SEEDS, bibtex, clean, emptyProfile, entryKey, embed, fromEntry, fromRows,
  isMuted, linkIds, match, merged, rank, read, related, rowTerms, usable, windowOf,
  withEntries, withMute, withoutMute,
} from "./recommend.js";
import { fetchBytes, index, store } from "./site.js";

const KEY = "papertrail.foryou";
const PAGE = 20;
const FOLLOW_PAPERS = 50;
const SHOWN_SEEDS = 200;  // a follow stands for the centroid of its newest matches
const OPEN_SEEDS = 10;  // a longer list of seeds comes folded, so the results show
// Entries known by an id older than the window are looked up in the search index for a
// title, as many as a shared link may name (one search each); the rest stay unused.
const LOOKUPS = MAX_LINK_SEEDS;

function readProfile() {
  try {
    return clean(JSON.parse(localStorage.getItem(KEY) || "{}"));
  } catch {
    return emptyProfile();
  }
}
// False when the browser refused it (site.js has told the reader).
function writeProfile(p) { return store(KEY, JSON.stringify(clean(p))); }

function loadData() {
  return Promise.all([fetchBytes("recommend/meta.json.gz"),
    fetchBytes("recommend/vectors.bin.gz")]).then(function (got) {
    return windowOf(JSON.parse(new TextDecoder().decode(got[0])), got[1]);
  });
}

const box = document.getElementById("foryou");
const list = document.getElementById("foryou-results");
const status = document.getElementById("foryou-status");
const more = document.getElementById("foryou-more");
const seedList = document.getElementById("foryou-seeds");
const seedBox = document.getElementById("foryou-seeds-box");
const mutedList = document.getElementById("foryou-muted");
const importStatus = document.getElementById("foryou-import-status");
const topicNames = JSON.parse(box.dataset.topicNames || "{}");
let shared = linkIds(location.search);
// A shared link's mutes: this view's only, never the reader's profile.
let viewMuted = [];
let data = null;
let generation = 0;  // a render started later wins
let seedsShown = false;  // folded once, when first shown; then as the reader leaves it

function fmt(template, values) {
  return template.replace(/\{(\w+)\}/g, function (all, k) { return k in values ? values[k] : all; });
}
function button(text, onClick, label) {
  const b = document.createElement("button");
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
function windowData() { return data || (data = loadData()); }

// -- seeds ---------------------------------------------------------------------------------
// A follow stands for its newest matches in the window (follow.js finds them).
function followSeeds(w) {
  if (!follows.read().length) return Promise.resolve([]);
  const first = w.meta.first_doc;
  return follows.feed().catch(function () { return []; }).then(function (items) {
    return follows.read().map(function (f) {
      const rows = [];
      items.forEach(function (x) {
        const r = x.entry.doc - first;
        if (r >= 0 && r < w.n && rows.length < FOLLOW_PAPERS && x.why.some(function (g) {
          return g.kind === f.kind && g.value === f.value;
        })) rows.push(r);
      });
      const key = "follow:" + f.kind + ":" + f.value, label = shownName(f.kind, f.value);
      if (rows.length) return fromRows(w, rows, key, label);
      if (f.kind !== "query") return null;
      const made = embed(w, f.value);
      return { key: key, kind: "follow", label: label, rows: [], placed: "text", vector: made.vector,
        words: made.words, terms: made.terms };
    }).filter(Boolean);
  });
}

function savedSeeds(w) {
  return follows.readSaved().map(function (x) {
    const id = x.id.toLowerCase(), own = bibtex(x.bibtex);
    return fromEntry(w, { id: id, title: x.title, text: own.length ? own[0].text : "" },
      "arxiv:" + id, "saved");
  });
}

// A seed from an entry that names only an id older than the window: the title the
// search index holds for it, placed by its words; none when the site lacks the paper.
function needsLookup(w, e) { return e.id && !e.title && !e.text && match(w, e) === null; }
function lookedUp(w, e, key, kind) {
  return index.search(e.id + " ").then(function (r) { return index.docs(r.docs.slice(0, 8)); })
    .then(function (found) {
      const d = found.filter(function (x) { return x.id === e.id; })[0];
      return fromEntry(w, { id: e.id, title: d ? d.title : "", text: "" }, key, kind);
    }, function () { return fromEntry(w, e, key, kind); });
}
// Entries as seeds, the first LOOKUPS that need the search index looked up there.
function entrySeeds(w, entries, kind) {
  let lookups = 0;
  return Promise.all(entries.map(function (e) {
    const key = entryKey(e);
    return needsLookup(w, e) && lookups++ < LOOKUPS ? lookedUp(w, e, key, kind) : fromEntry(w, e, key, kind);
  }));
}

// A seed known only by its id takes its title from the search index.
function labelled(w, seeds) {
  const need = seeds.filter(function (s) { return s.rows.length === 1 && s.label === s.id; });
  if (!need.length) return Promise.resolve(seeds);
  return index.docs(need.map(function (s) { return w.meta.first_doc + s.rows[0]; }))
    .then(function (docs) {
      docs.forEach(function (d, i) { if (d) need[i].label = d.title; });
      return seeds;
    }, function () { return seeds; });
}

function gather(w) {
  if (shared) return entrySeeds(w, shared.map(function (id) { return { id: id, title: "", text: "" }; }), "link");
  const p = readProfile();
  const gone = new Set(p.removed);
  return Promise.all([followSeeds(w), entrySeeds(w, p.imported, "import")]).then(function (got) {
    const seen = new Set();
    return savedSeeds(w).concat(got[0], got[1]).filter(function (s) {
      if (gone.has(s.key) || seen.has(s.key)) return false;
      seen.add(s.key);
      return true;
    });
  });
}

// -- the profile's lists -------------------------------------------------------------------
function removeSeed(s) {
  const p = readProfile();
  if (s.kind === "import") {
    p.imported = p.imported.filter(function (e) { return entryKey(e) !== s.key; });
  } else if (p.removed.indexOf(s.key) < 0) {
    p.removed.push(s.key);  // a saved paper or a follow stays where it is, unused here
  }
  if (writeProfile(p)) render();
}

// The first SHOWN_SEEDS seeds listed, then how many more: a list of 20,000 would take
// the tab seconds to make and as long again to leave.
function showSeeds(seeds) {
  seedList.textContent = "";
  seedBox.hidden = !seeds.length;  // none: the status says so, once
  if (seeds.length && !seedsShown) {
    seedBox.open = seeds.length <= OPEN_SEEDS;
    seedsShown = true;
  }
  seeds.slice(0, SHOWN_SEEDS).forEach(function (s) {
    const li = document.createElement("li");
    li.dataset.key = s.key;
    const kind = document.createElement("span");
    kind.className = "kind";
    kind.textContent = kindLabel(s.kind);
    const name = document.createElement("bdi");
    name.textContent = s.label;  // never markup: imported titles are text
    li.append(kind, " ", name);
    if (s.id) li.append(" · arXiv:" + s.id);
    const placed = document.createElement("span");  // how it was placed among the papers
    placed.className = "placed note";
    placed.textContent = " · " + box.dataset["placed" + s.placed[0].toUpperCase() + s.placed.slice(1)];
    li.append(placed);
    if (!shared) li.append(" ", button(box.dataset.remove, function () { removeSeed(s); },
      box.dataset.remove + " · " + s.label));
    seedList.appendChild(li);
  });
  if (seeds.length > SHOWN_SEEDS) {
    const rest = document.createElement("li");
    rest.className = "note";
    rest.textContent = fmt(box.dataset.seedsMore, { n: seeds.length - SHOWN_SEEDS });
    seedList.appendChild(rest);
  }
  const share = document.getElementById("foryou-share");
  const ids = seeds.map(function (s) { return s.id; }).filter(Boolean).slice(0, MAX_LINK_SEEDS);
  share.hidden = shared !== null || !ids.length;
  share.href = "?seed=" + ids.map(encodeURIComponent).join(",");
}

// The mutes in force: a shared link's own (this view only), else the profile's.
function mutes() { return shared ? viewMuted : readProfile().muted; }
function setMutes(muted) {
  if (shared) viewMuted = muted;
  else {
    const p = readProfile();
    p.muted = muted;
    if (!writeProfile(p)) return;
  }
  render();
}

function showMuted() {
  const muted = mutes();
  mutedList.textContent = "";
  if (!muted.length) {
    const none = document.createElement("li");
    none.className = "note";
    none.textContent = box.dataset.mutedNone;
    mutedList.appendChild(none);
  }
  muted.forEach(function (m) {
    const li = document.createElement("li");
    const kind = document.createElement("span");
    kind.className = "kind";
    kind.textContent = kindLabel(m.kind);
    const name = document.createElement("bdi");
    name.textContent = shownName(m.kind, m.value);
    li.append(kind, " ", name, " ", button(box.dataset.unmute, function () {
      setMutes(withoutMute(mutes(), m));
    }, box.dataset.unmute + " · " + shownName(m.kind, m.value)));
    mutedList.appendChild(li);
  });
}

// -- results -------------------------------------------------------------------------------
function why(w, item, seed, d) {
  const p = document.createElement("p");
  p.className = "why";
  const closest = document.createElement("bdi");
  closest.textContent = seed.label;
  p.append(box.dataset.closest, closest);
  const mine = rowTerms(w, item.row);
  let label = box.dataset.terms;
  let common = seed.terms.filter(function (t) { return mine.indexOf(t) >= 0; });
  if (!common.length) {  // no word in common: the paper's words nearest the seed's
    common = related(w, mine, seed.vector);
    label = box.dataset.related;
  }
  if (common.length) {
    p.append(" · " + label);
    common.forEach(function (t, i) {
      const term = document.createElement("span");
      term.className = "term";
      term.textContent = w.meta.vocab[t];
      p.append(i ? ", " : "", term);
    });
  }
  const buttons = document.createElement("p");
  buttons.className = "mutes";
  const targets = [["category", d.categories[0]], ["author", d.authors[0]]].concat(
    d.topics.map(function (t) { return ["topic", t]; }));
  targets.filter(function (t) { return t[1]; }).forEach(function (t) {
    const text = box.dataset.mute + " " + kindLabel(t[0]) + " · " + shownName(t[0], t[1]);
    buttons.append(button(text, function () {
      setMutes(withMute(mutes(), { kind: t[0], value: t[1] }));
    }), " ");
  });
  return [p, buttons];
}

// The next PAGE results that no mute hides, as cards with why and the mute buttons.
function showFrom(w, ranked, seeds, start, run) {
  const muted = mutes();
  let shown = 0, at = start;
  function step() {
    if (run !== generation) return Promise.resolve();
    if (shown >= PAGE || at >= ranked.length) {
      more.hidden = at >= ranked.length;
      more.textContent = fmt(box.dataset.more, { n: PAGE });
      more.onclick = function () { showFrom(w, ranked, seeds, at, run); };
      list.dataset.ready = "1";
      return Promise.resolve();
    }
    const batch = ranked.slice(at, at + PAGE * 2);
    at += batch.length;
    return index.docs(batch.map(function (x) { return w.meta.first_doc + x.row; })).then(function (docs) {
      if (run !== generation) return;
      let used = batch.length;
      for (let i = 0; i < docs.length; i++) {
        if (shown >= PAGE) { used = i; break; }
        const d = docs[i];
        if (!d || isMuted(d, muted)) continue;
        const item = batch[i];
        const li = card(d, { tldr: true, meta: "arXiv:" + d.id + " · " + local(d.first_seen) +
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
  const run = ++generation;
  list.dataset.ready = "";
  showMuted();
  return windowData().then(function (w) {
    return index.manifest().then(function () { return gather(w); }).then(function (seeds) {
      return labelled(w, seeds);
    }).then(function (seeds) {
      if (run !== generation) return;
      showSeeds(seeds);
      seeds = seeds.filter(usable).slice(0, MAX_SEEDS);
      list.textContent = "";
      more.hidden = true;
      if (!seeds.length || !w.n) {
        status.textContent = w.n ? box.dataset.none : box.dataset.empty;
        list.dataset.ready = "1";
        return;
      }
      const ranked = rank(w, seeds);
      status.textContent = fmt(box.dataset.status, { n: seeds.length, count: ranked.length });
      return showFrom(w, ranked, seeds, 0, run);
    });
  }).catch(function (err) {
    status.textContent = String(err.message || err);
    list.dataset.ready = "1";
  });
}

// -- import, export, reset, a shared link's seeds kept ---------------------------------------
function importFile(ev) {
  const file = ev.target.files[0];
  if (!file) return;
  ev.target.value = "";
  if (file.size > MAX_IMPORT_BYTES) {  // refused before reading: the tab stays responsive
    importStatus.textContent = fmt(box.dataset.importTooBig, {
      mb: (file.size / 1048576).toFixed(1), max: MAX_IMPORT_BYTES / 1048576 });
    return;
  }
  file.text().then(function (text) {
    const got = read(text);
    if (got.profile) {
      follows.merge(got.profile);
      if (!writeProfile(merged(readProfile(), clean(got.profile.foryou)))) return;
      importStatus.textContent = "";
      return render();
    }
    if (!got.entries.length) {
      importStatus.textContent = box.dataset.importNone;
      return;
    }
    return addEntries(got.entries).then(function (kept) { if (kept) render(); });
  }).catch(function (err) { importStatus.textContent = String(err.message || err); });
}

// True once the entries are in the stored profile.
function addEntries(entries) {
  return windowData().then(function (w) {
    if (!writeProfile(withEntries(readProfile(), entries))) return false;
    const matched = entries.filter(function (e) { return match(w, e) !== null; }).length;
    importStatus.textContent = fmt(box.dataset.imported, { n: entries.length, matched: matched });
    return true;
  });
}

document.getElementById("foryou-import").addEventListener("change", importFile);
document.getElementById("foryou-export").addEventListener("click", function () {
  follows.download("papertrail-profile.json", "application/json", JSON.stringify({
    papertrail_profile: 1, papertrail_follows: 1, follows: follows.read(), saved: follows.readSaved(),
    foryou: readProfile() }, null, 1));
});
const reset = document.getElementById("foryou-reset");
reset.addEventListener("click", function () {
  if (!window.confirm(reset.dataset.confirm)) return;
  if (!writeProfile(emptyProfile())) return;
  importStatus.textContent = "";
  render();
});
if (shared) {
  document.getElementById("foryou-shared").hidden = false;
  document.getElementById("foryou-shared-note").textContent = fmt(box.dataset.shared, { n: shared.length });
  document.getElementById("foryou-keep").addEventListener("click", function () {
    // The link leaves the address only once its seeds are stored: a refused write keeps it.
    addEntries(shared.map(function (id) { return { id: id, title: "", text: "" }; })).then(function (kept) {
      if (!kept) return;
      shared = null;
      viewMuted = [];
      document.getElementById("foryou-shared").hidden = true;
      history.replaceState(null, "", location.pathname);
      render();
    });
  });
}
render();
