// PaperTrail following (关注) and saved papers (收藏与笔记): both live in this browser's
// localStorage only. Authors, categories and topics match the newest papers in
// search/recent.json; keywords run through the search index. The nav badge counts matches
// stored after the follow was made and after the last visit to the feed page.
// The follows and saved papers are this module's exports (search.js follows a query,
// foryou.js seeds from them); start() puts the buttons, the save box and the follow page
// in place once the page's boxes are (app.js).
import { normalise, record } from "./engine.js";
import { card, local } from "./cards.js";
import { tomlSnippet, savedBibtex } from "./fork.js";
import { fetchJSON, index, root, store } from "./site.js";

const KEY = "papertrail.follows";
const SEEN = "papertrail.seen";
const KINDS = ["author", "category", "topic", "query"];

export function read() {
  try {
    const data = JSON.parse(localStorage.getItem(KEY) || "[]");
    return Array.isArray(data) ? data.filter(valid) : [];
  } catch {
    return [];  // unreadable storage means no follows, not a broken page
  }
}
// A lone surrogate (from a hand-made storage or import file) can be neither URL-encoded
// for the follow's link nor written as TOML for a fork: such a value is no follow.
function valid(f) {
  return f && KINDS.indexOf(f.kind) >= 0 && typeof f.value === "string" && f.value.length > 0 &&
    !/\p{Cs}/u.test(f.value) && (f.since === undefined || Number.isFinite(f.since));
}
// Minutes since 1970, the unit of the index's clocks: when a follow was made.
function nowMinutes() { return Math.floor(Date.now() / 60000); }
// Through site.js's store(): a full storage leaves the follows as they were (and says so).
function write(list) { store(KEY, JSON.stringify(list)); changed(); }
export function has(kind, value) { return read().some(function (f) { return f.kind === kind && f.value === value; }); }
export function toggle(kind, value) {
  const list = read();
  const rest = list.filter(function (f) { return !(f.kind === kind && f.value === value); });
  if (rest.length === list.length) rest.push({ kind: kind, value: value, since: nowMinutes() });
  write(rest);
  return has(kind, value);  // what is stored: a refused write changed nothing
}
function seen() { return Number(localStorage.getItem(SEEN) || 0); }
// New to the reader: stored after the last visit to the feed page and after a follow it
// matched was made (a first follow does not count the paper's whole past).
function fresh(x, since) {
  return x.entry.first_seen > since && x.why.some(function (f) {
    return x.entry.first_seen > (f.since || 0);
  });
}

let recentP = null;
function recent() {
  if (!recentP) {
    recentP = Promise.all([index.manifest(), fetchJSON("search/recent.json")]).then(function (got) {
      return got[1].map(function (row) { return record(got[0], "recent", row); });
    });
  }
  return recentP;
}

// Recent entries (doc, id, first_seen, normalised authors, categories, topics: the
// manifest's fields.recent) matching any follow, newest first, each with the follows
// it matched.
export function feed() {
  const follows = read();
  if (!follows.length) return Promise.resolve([]);
  const queries = follows.filter(function (f) { return f.kind === "query"; });
  return Promise.all([recent(), Promise.all(queries.map(function (f) {
    return index.search(f.value + " ").then(function (r) { return new Set(r.docs); });
  }))]).then(function (res) {
    const entries = res[0], hits = res[1];
    const out = [];
    entries.forEach(function (e) {
      const why = follows.filter(function (f) {
        if (f.kind === "author") return e.authors.indexOf(normalise(f.value)) >= 0;
        if (f.kind === "category") return e.categories.indexOf(f.value) >= 0;
        if (f.kind === "topic") return e.topics.indexOf(f.value) >= 0;
        return hits[queries.indexOf(f)].has(e.doc);
      });
      if (why.length) out.push({ entry: e, why: why });
    });
    return out;
  });
}

function badge() {
  const nodes = document.querySelectorAll("[data-follow-badge]");
  if (!nodes.length) return;
  feed().then(function (items) {
    const since = seen();
    const count = items.filter(function (x) { return fresh(x, since); }).length;
    nodes.forEach(function (n) {
      n.textContent = count ? String(count) : "";
      n.hidden = !count;
    });
  }).catch(function (err) { console.warn("follow badge:", err.message || err); });
}

function changed() {
  badge();
  syncButtons();
  syncFork();
}

// -- the follows as a [[follows]] table for a fork's papertrail.toml (fork.js) ----------
function shown(v) {
  return JSON.stringify(v).replace(/[\u007f-\u009f]/g, function (c) {
    return "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4);
  });
}

function syncFork() {
  const fork = document.getElementById("follow-fork");
  if (!fork) return;
  const got = tomlSnippet(read(), fork.dataset.name, {
    categories: (fork.dataset.categories || "").split(" "),
    topics: Object.keys(JSON.parse(document.getElementById("follow-page").dataset.topicNames || "{}")),
  });
  const text = got.text;
  document.getElementById("follow-toml").textContent = text;  // never markup: values are typed
  document.getElementById("follow-toml-status").textContent = "";
  // What was left out, as JSON strings so a tab or a control character shows as its escape.
  const left = document.getElementById("follow-toml-left");
  left.textContent = got.left.length ? fork.dataset.leftOut +
    got.left.map(shown).join(", ") : "";
  left.hidden = !got.left.length;
  document.getElementById("follow-fork-snippet").hidden = !text;
  document.getElementById("follow-fork-none").hidden = !!text;
}

function copyFork() {
  const code = document.getElementById("follow-toml");
  const status = document.getElementById("follow-toml-status");
  const fork = document.getElementById("follow-fork");
  let copying;
  try {
    copying = navigator.clipboard.writeText(code.textContent);
  } catch (e) {
    copying = Promise.reject(e);  // no navigator.clipboard outside a secure context
  }
  copying.then(function () { status.textContent = fork.dataset.copied; }, function () {
    // Denied or unavailable: select the code so that the reader's own Ctrl-C copies it.
    const range = document.createRange();
    range.selectNodeContents(code);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    status.textContent = fork.dataset.select;
  });
}

// -- follow buttons on paper pages -------------------------------------------------------
// A paper page carries an empty [data-follows] box with the buttons' labels; the buttons
// are made here from what the page already shows (its authors, its category
// links, its topic links), so the page itself does not repeat every name a second time.
const MAX_AUTHORS = 50;  // every author of nearly every paper (the last is often the lab's head)

function topicSlug(a) {
  const m = /topic\/([^/]+)\/$/.exec(a.getAttribute("href") || "");
  return m ? decodeURIComponent(m[1]) : null;
}
// [kind, value, what the button names]: a topic is followed by its slug and named as its
// link reads, in the site's language.
function followTargets(article) {
  const texts = function (sel) {
    return Array.prototype.map.call(article.querySelectorAll(sel), function (n) { return n.textContent; });
  };
  const topics = Array.prototype.map.call(article.querySelectorAll(".topics a"), function (a) {
    return ["topic", topicSlug(a), a.textContent];
  });
  return texts(".authors bdi").slice(0, MAX_AUTHORS).map(function (v) { return ["author", v, v]; })
    .concat(texts(".cats a").map(function (v) { return ["category", v, v]; }))
    .concat(topics.filter(function (t) { return t[1]; }));
}
function makeButtons(box) {
  const article = box.closest("article") || document;
  followTargets(article).forEach(function (t) {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.followKind = t[0];
    b.dataset.followValue = t[1];  // never markup: names are text
    const name = document.createElement("bdi");
    name.textContent = t[2];
    b.append(box.dataset[t[0]] + " · ", name);
    box.append(b, " ");
  });
  box.hidden = false;
}
function syncButtons() {
  document.querySelectorAll("[data-follow-kind]").forEach(function (b) {
    b.setAttribute("aria-pressed", has(b.dataset.followKind, b.dataset.followValue) ? "true" : "false");
  });
}

// -- saved papers and notes --------------------------------------------------------------
// A saved paper keeps what its page's citation tags and BibTeX entry say, so the follow
// page lists it and exports BibTeX without fetching anything.
const SAVED = "papertrail.saved";
const MAX_NOTE = 20000;  // characters; localStorage holds ~5 MB for the whole site

function validSaved(x) {
  // The id and the page's path stay inside paper/: a hand-made storage or import file
  // must not make a link elsewhere (javascript:, ../).
  return x && typeof x.id === "string" && /^[A-Za-z0-9./-]{1,64}$/.test(x.id) &&
    typeof x.url === "string" && /^paper\/[A-Za-z0-9./-]+\.html$/.test(x.url) &&
    (x.id + x.url).indexOf("..") < 0 && typeof x.title === "string" &&
    typeof x.bibtex === "string" && typeof x.note === "string" && Number.isFinite(x.saved);
}
export function readSaved() {
  try {
    const data = JSON.parse(localStorage.getItem(SAVED) || "[]");
    return Array.isArray(data) ? data.filter(validSaved) : [];
  } catch {
    return [];
  }
}
function writeSaved(list) { return store(SAVED, JSON.stringify(list)); }
function savedOne(id) { return readSaved().filter(function (x) { return x.id === id; })[0]; }

function meta(name) {
  const m = document.querySelector('meta[name="' + name + '"]');
  return m ? m.content : "";
}

function saveBox(box) {
  const id = meta("citation_arxiv_id");
  const here = location.href.split("#")[0];
  if (!id || here.indexOf(root) !== 0) return;
  const button = document.createElement("button");
  button.type = "button";
  const label = document.createElement("label");
  const note = document.createElement("textarea");
  note.rows = 3;
  note.maxLength = MAX_NOTE;
  label.append(box.dataset.note, note);
  box.append(button, label);

  function sync() {
    const x = savedOne(id);
    button.setAttribute("aria-pressed", x ? "true" : "false");
    button.textContent = x ? box.dataset.saved : box.dataset.save;
    label.hidden = !x;
    if (x && document.activeElement !== note) note.value = x.note;
  }
  button.addEventListener("click", function () {
    const all = readSaved();
    const rest = all.filter(function (x) { return x.id !== id; });
    if (rest.length === all.length) {
      rest.unshift({ id: id, title: meta("citation_title"), url: here.slice(root.length),
        bibtex: (document.getElementById("bibtex") || {}).textContent || "", note: "",
        saved: nowMinutes() });
    }
    writeSaved(rest);
    sync();
  });
  note.addEventListener("input", function () {
    writeSaved(readSaved().map(function (x) {
      if (x.id === id) x.note = note.value.slice(0, MAX_NOTE);
      return x;
    }));
  });
  sync();
  box.hidden = false;
}

export function download(name, type, text) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([text], { type: type }));
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(function () { URL.revokeObjectURL(a.href); }, 1000);
}

function renderSaved() {
  const section = document.getElementById("saved");
  if (!section) return;
  const list = document.getElementById("saved-list");
  // Times in the site's zone, which the search index's manifest names.
  index.manifest().catch(function () {}).then(function () { showSaved(section, list); });
}

function showSaved(section, list) {
  const saved = readSaved();
  list.textContent = "";
  document.getElementById("saved-none").textContent = saved.length ? "" : section.dataset.none;
  document.getElementById("saved-bibtex").hidden = !saved.length;
  saved.forEach(function (x) {
    const li = document.createElement("li");
    li.dataset.id = x.id;
    const a = document.createElement("a");
    a.href = root + x.url;
    a.textContent = x.title || x.id;  // never markup: titles are text
    const when = document.createElement("small");
    when.textContent = " · arXiv:" + x.id + " · " +
      section.dataset.on.replace("{time}", local(x.saved));
    const rm = document.createElement("button");
    rm.type = "button";
    rm.textContent = section.dataset.remove;
    rm.addEventListener("click", function () {
      writeSaved(readSaved().filter(function (y) { return y.id !== x.id; }));
      renderSaved();
    });
    li.append(a, when, " ", rm);
    if (x.note) {
      const p = document.createElement("p");
      p.className = "note-text";
      p.textContent = x.note;
      li.appendChild(p);
    }
    list.appendChild(li);
  });
}

// An export's follows and saved papers (this page's, or 为你推荐's profile) added to
// this browser's: what is here already stays as it is.
function followKey(f) { return f.kind + "\n" + f.value; }
export function merge(data) {
  const incoming = (Array.isArray(data) ? data : data.follows || []).filter(valid)
    .map(function (f) { return { kind: f.kind, value: f.value, since: f.since || nowMinutes() }; });
  const list = read(), followed = new Set(list.map(followKey));
  incoming.forEach(function (f) {
    if (!followed.has(followKey(f))) { followed.add(followKey(f)); list.push(f); }
  });
  write(list);
  const saved = readSaved(), ids = new Set(saved.map(function (x) { return x.id; }));
  (Array.isArray(data.saved) ? data.saved : []).filter(validSaved).forEach(function (x) {
    if (!ids.has(x.id)) { ids.add(x.id); saved.push(x); }
  });
  writeSaved(saved);
}

export function start() {
  document.querySelectorAll("[data-follows]").forEach(makeButtons);
  // A topic's or category's page has its own button, shown once it can work.
  document.querySelectorAll("button[data-follow-kind][hidden]").forEach(function (b) { b.hidden = false; });
  // One handler for every follow button, those made above and any made later.
  document.addEventListener("click", function (ev) {
    const b = ev.target.closest && ev.target.closest("button[data-follow-kind]");
    if (b) toggle(b.dataset.followKind, b.dataset.followValue);
  });
  document.querySelectorAll("[data-save]").forEach(saveBox);
  const box = document.getElementById("follow-page");
  if (box) feedPage(box);
  else changed();
}

function feedPage(box) {
  const status = document.getElementById("follow-status");
  const list = document.getElementById("feed");
  const follows = document.getElementById("follow-list");
  const more = document.getElementById("feed-more");
  const since = seen();
  const topicNames = JSON.parse(box.dataset.topicNames || "{}");
  const PAGE = 50;  // cards fetched and shown at a time

  function link(href, text) {
    const a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    return a;
  }
  function searchUrl(q) { return root + "search/?q=" + encodeURIComponent(q); }

  function renderFollows() {
    follows.textContent = "";
    read().forEach(function (f) {
      const li = document.createElement("li");
      const kind = document.createElement("span");
      kind.className = "kind";
      kind.textContent = box.dataset["kind" + f.kind[0].toUpperCase() + f.kind.slice(1)];
      li.appendChild(kind);
      li.appendChild(document.createTextNode(" "));
      if (f.kind === "topic") {
        li.appendChild(link(root + "topic/" + encodeURIComponent(f.value) + "/",
          topicNames[f.value] || f.value));
        li.appendChild(document.createTextNode(" · "));
        li.appendChild(link(root + "feeds/topic/" + encodeURIComponent(f.value) + ".atom.xml", "Atom"));
        li.appendChild(document.createTextNode(" "));
        li.appendChild(link(root + "feeds/topic/" + encodeURIComponent(f.value) + ".rss.xml", "RSS"));
      } else if (f.kind === "category") {
        li.appendChild(link(root + "category/" + encodeURIComponent(f.value) + "/", f.value));
        li.appendChild(document.createTextNode(" · "));
        li.appendChild(link(root + "feeds/category/" + encodeURIComponent(f.value) + ".atom.xml", "Atom"));
      } else {
        li.appendChild(link(searchUrl(f.value), f.value));
      }
      const rm = document.createElement("button");
      rm.type = "button";
      rm.textContent = box.dataset.remove;
      rm.addEventListener("click", function () { toggle(f.kind, f.value); render(); });
      li.appendChild(document.createTextNode(" "));
      li.appendChild(rm);
      follows.appendChild(li);
    });
  }

  function render() {
    renderFollows();
    if (!read().length) {
      status.textContent = box.dataset.none;
      list.textContent = "";
      more.hidden = true;
      badge();
      return Promise.resolve();
    }
    return feed().then(function (items) {
      const count = items.filter(function (x) { return fresh(x, since); }).length;
      status.textContent = items.length ? box.dataset.new.replace("{n}", count) : box.dataset.empty;
      list.textContent = "";
      return showFrom(items, 0).then(function () {
        list.dataset.ready = "1";
        // This visit has seen everything listed: the badge counts from here on.
        const newest = items.reduce(function (m, x) { return Math.max(m, x.entry.first_seen); }, since);
        store(SEEN, String(newest));
        badge();
      });
    }).catch(function (err) { status.textContent = String(err.message || err); });
  }

  // The next PAGE of matches as cards (digest line included), and a button for the rest.
  function showFrom(items, start) {
    const page = items.slice(start, start + PAGE);
    return index.docs(page.map(function (x) { return x.entry.doc; })).then(function (docs) {
      docs.forEach(function (d, i) {
        const x = page[i];
        list.appendChild(card(d, { tldr: true, fresh: fresh(x, since), meta: "arXiv:" +
          d.id + " · " + local(x.entry.first_seen) + " · " + x.why.map(function (f) {
            return f.kind === "topic" ? topicNames[f.value] || f.value : f.value;
          }).join(", ") }));
      });
      const left = items.length - start - page.length;
      more.hidden = left <= 0;
      more.textContent = box.dataset.more.replace("{n}", Math.min(left, PAGE));
      more.onclick = function () { showFrom(items, start + PAGE); };
    });
  }

  document.getElementById("follow-toml-copy").addEventListener("click", copyFork);
  syncFork();
  document.getElementById("follow-export").addEventListener("click", function () {
    download("papertrail-follows.json", "application/json", JSON.stringify(
      { papertrail_follows: 1, follows: read(), saved: readSaved() }, null, 1));
  });
  document.getElementById("saved-bibtex").addEventListener("click", function () {
    download("papertrail-saved.bib", "application/x-bibtex", savedBibtex(readSaved()));
  });
  renderSaved();
  document.getElementById("follow-import").addEventListener("change", function (ev) {
    const file = ev.target.files[0];
    if (!file) return;
    file.text().then(function (text) {
      merge(JSON.parse(text));
      renderSaved();
      ev.target.value = "";
      return render();
    }).catch(function (err) { status.textContent = String(err.message || err); });
  });
  const clear = document.getElementById("follow-clear");
  clear.addEventListener("click", function () {
    const n = read().length;  // asked first: nothing brings the follows back but an export
    if (n && !window.confirm(clear.dataset.confirm.replace("{n}", n))) return;
    write([]);
    render();
  });
  render();
}
