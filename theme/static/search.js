// PaperTrail's search on every page: the header's quick search (an arXiv id jumps to its
// paper), author names as links to their papers, 404.html's paper, a paper page's similar
// papers, and the search page. The engine is engine.js (through site.js's index); results
// are cards.js's cards. start() runs once the page's boxes are in place (app.js).
import { filtering, CLOCKS } from "./engine.js";
import { authorUrl, card, metaLine, paperUrl } from "./cards.js";
import { has as following, toggle as toggleFollow } from "./follow.js";
import { index, root } from "./site.js";

// The first screen shows 4-5 results, and each result may need its own doc chunk (one
// request): a short first page is a fast one.
const PAGE = 8;
// Keystrokes closer than this are one burst, searched when it ends: a fast typist's
// (~100 ms a key); slower typing searches at every key.
const BURST_MS = 100;
const ID = "([0-9]{4}\\.[0-9]{4,5}|[a-z][a-z.-]*/[0-9]{7})";  // an arXiv id, new or old style
const ARXIV = new RegExp("^(?:arxiv:\\s*)?" + ID + "(?:v[0-9]+)?$", "i");
const ARXIV_URL = new RegExp("^(?:https?://)?(?:www\\.|export\\.)?arxiv\\.org/(?:abs|pdf|html)/" +
  ID + "(?:v[0-9]+)?(?:\\.pdf)?/?$", "i");
const PAPER_PATH = new RegExp("^paper/" + ID + "\\.html$", "i");  // a paper page's, from root

// An arXiv id or URL → its page here when the index knows it, else arxiv.org.
function arxivTarget(query) {
  const q = query.trim();
  const m = q.match(ARXIV_URL) || q.match(ARXIV);
  if (!m) return null;
  const id = m[1].toLowerCase();
  return index.paperById(id).then(function (hit) {
    return hit ? paperUrl(hit) : "https://arxiv.org/abs/" + id;
  }, function () { return "https://arxiv.org/abs/" + id; });
}

export function start() {
  // -- header quick search: an id jumps, anything else opens the search page ------------
  document.querySelectorAll("form.quick").forEach(function (form) {
    form.addEventListener("submit", function (ev) {
      const target = arxivTarget(form.elements.q.value);
      if (!target) return;
      ev.preventDefault();
      target.then(function (url) { location.href = url; });
    });
  });

  // The pages' author names become links to their search; the search needs this script,
  // so without it they stay plain names.
  document.querySelectorAll("p.authors bdi").forEach(function (bdi) {
    const link = document.createElement("a");
    link.href = authorUrl(bdi.textContent);
    bdi.parentNode.replaceChild(link, bdi);
    link.appendChild(bdi);
  });

  const missing = document.getElementById("missing-paper");
  if (missing) missingPaper(missing);

  const similar = document.querySelector("section[data-similar]");
  if (similar) similarPapers(similar);

  const form = document.getElementById("search");
  if (form) page(form);
}

// 404.html, served for any address the site lacks: a paper page's address names its
// paper, shown here from the index (its title linking to arXiv when it has no page).
// The address is untrusted: only an id of arXiv's grammar is read from it.
function missingPaper(section) {
  const path = location.pathname.slice(new URL(root, location.href).pathname.length);
  const m = path.match(PAPER_PATH);
  if (!m) return;
  const id = m[1], why = document.getElementById("missing-why");
  const list = document.getElementById("missing-result");
  section.hidden = false;
  section.dataset.busy = "1";  // tests wait on this: the paper, or why not, is on screen
  index.paperById(id).then(function (d) {
    if (d) {  // it may have its page after all (a deploy under way): then no "why"
      why.textContent = index.hasPage(d) ? "" : section.dataset.gone.replace("{id}", id);
      document.title = d.title + " · " + document.title;
      list.appendChild(card(d, { heading: "h2", tldr: true, moreLike: section.dataset.moreLike,
        meta: metaLine(d, "updated") }));
    } else {
      why.textContent = section.dataset.unknown.replace("{id}", id) + " ";
      const a = document.createElement("a");
      a.href = "https://arxiv.org/abs/" + id;
      a.textContent = section.dataset.arxiv;
      why.appendChild(a);
    }
  }).catch(function (err) {
    why.textContent = String(err.message || err);
  }).then(function () { delete section.dataset.busy; });
}

// A paper page's similar papers, from the index's list (the one 更多类似 shows): titles
// linking to their pages, or to arXiv for papers without one. Shown once they are there.
function similarPapers(section) {
  section.dataset.busy = "1";  // tests wait on this
  index.similarTo(section.dataset.similar).then(function (r) { return index.docs(r.docs); })
    .then(function (found) {
      const list = section.querySelector("ol");
      found.forEach(function (d) {
        const li = document.createElement("li"), a = document.createElement("a");
        a.href = paperUrl(d);
        a.textContent = d.title;
        li.appendChild(a);
        list.appendChild(li);
      });
      section.hidden = !found.length;
    }).catch(function (err) { console.warn("similar papers:", err.message || err); })
    .then(function () { delete section.dataset.busy; });
}

function page(form) {
  const input = form.elements.q;
  const status = document.getElementById("search-status");
  const list = document.getElementById("results");
  const more = document.getElementById("more");
  const followBtn = document.getElementById("follow-query");
  const KEYS = ["q", "cat", "topic", "ai", "rev", "hf", "venue", "range", "sort"];
  let timer = null, seq = 0, current = null, shown = 0;
  let like = null;  // ?like=ID: that paper's similar papers are the results, until a query

  function state() {
    const st = {};
    KEYS.forEach(function (k) {
      const el = form.elements[k];
      st[k] = el.type === "checkbox" ? (el.checked ? "1" : "") : el.value;
    });
    return st;
  }
  function fromUrl() {
    const params = new URLSearchParams(location.search);
    KEYS.forEach(function (k) {
      const el = form.elements[k], v = params.get(k) || "";
      if (el.type === "checkbox") el.checked = v === "1"; else el.value = v;
    });
    like = params.get("like");
  }
  function toUrl(push) {
    const st = state(), params = new URLSearchParams();
    KEYS.forEach(function (k) { if (st[k]) params.set(k, st[k]); });
    if (like) params.set("like", like);
    const qs = params.toString();
    const url = location.pathname + (qs ? "?" + qs : "");
    if (url === location.pathname + location.search) return;
    history[push ? "pushState" : "replaceState"](null, "", url);
  }

  function syncFollow() {
    const q = input.value.trim();
    followBtn.hidden = !q;
    if (!q) return;
    const on = following("query", q);
    followBtn.setAttribute("aria-pressed", on ? "true" : "false");
    followBtn.textContent = on ? form.dataset.following + " · " + q : form.dataset.follow;
  }

  function run() {
    const st = state();
    const mine = ++seq;
    syncFollow();
    const likeOnly = like && !st.q.trim();
    if (!st.q.trim() && !filtering(st) && !likeOnly) {
      list.textContent = "";
      status.textContent = "";
      more.hidden = true;
      delete form.dataset.busy;
      return Promise.resolve();
    }
    status.textContent = form.dataset.loading;
    return (likeOnly ? index.similarTo(like) : index.search(st.q, st)).then(function (r) {
      if (mine !== seq) return null;
      current = r;
      shown = 0;
      list.textContent = "";
      if (!r.docs.length) {
        status.textContent = form.dataset.none;
        suggest(r.suggest);
        more.hidden = true;
        delete form.dataset.busy;
        return null;
      }
      const n = r.docs.length.toLocaleString();
      if (r.of) {  // "与《title》最相似的 n 篇论文", the title linking to the paper
        const around = form.dataset.like.replace("{n}", n).split("{title}");
        const of = document.createElement("a");
        of.href = paperUrl(r.of);
        of.textContent = r.of.title;
        status.textContent = around[0];
        status.appendChild(of);
        status.appendChild(document.createTextNode(around.slice(1).join("")));
      } else {
        status.textContent = form.dataset.count.replace("{n}", n);
        suggest(r.suggest);
      }
      return showMore(mine);
    }).catch(function (err) {
      if (mine !== seq) return;
      status.textContent = String(err.message || err);
      delete form.dataset.busy;
    });
  }

  // "Did you mean …": a link that searches the query with the word far more papers hold.
  function suggest(query) {
    if (!query || query === input.value.trim()) return;
    const around = form.dataset.suggest.split("{q}");
    const a = document.createElement("a");
    a.className = "suggest";
    a.href = "?q=" + encodeURIComponent(query);
    a.textContent = query;
    a.addEventListener("click", function (ev) {
      ev.preventDefault();
      input.value = query;
      toUrl(true);
      run();
    });
    status.appendChild(document.createTextNode(" · " + around[0]));
    status.appendChild(a);
    status.appendChild(document.createTextNode(around.slice(1).join("")));
  }

  function showMore(mine) {
    const slice = current.docs.slice(shown, shown + PAGE);
    shown += slice.length;
    more.hidden = shown >= current.docs.length;
    return index.docs(slice).then(function (records) {
      if (mine !== seq) return;
      const sort = form.elements.sort.value;
      const clock = CLOCKS.indexOf(sort) >= 0 ? sort : "updated";
      records.forEach(function (d) {
        list.appendChild(card(d, { heading: "h2", terms: current.terms, tldr: true,
          moreLike: form.dataset.moreLike, meta: metaLine(d, clock) }));
      });
      delete form.dataset.busy;  // tests and scripts wait on this: results are on screen
    });
  }

  // A keystroke after a pause searches at once; a burst of keystrokes searches once,
  // when it ends: the words half typed in it are never fetched.
  let lastKey = 0;
  input.addEventListener("input", function () {
    clearTimeout(timer);
    seq++;  // a search still in flight is stale now: it must not render nor clear busy
    form.dataset.busy = "1";
    const pasted = input.value.trim().match(ARXIV_URL);
    like = null;
    const go = function () {
      if (pasted) { jump(); return; }
      toUrl(false);
      run();
    };
    const now = Date.now(), paused = now - lastKey > BURST_MS;
    lastKey = now;
    if (paused) go();
    else timer = setTimeout(go, BURST_MS);
  });
  function jump() {
    const target = arxivTarget(input.value);
    if (target) target.then(function (url) { location.href = url; });
    return !!target;
  }
  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    if (jump()) return;
    clearTimeout(timer);
    form.dataset.busy = "1";
    like = null;
    toUrl(true);
    run();
  });
  form.addEventListener("change", function (ev) {
    if (ev.target === input) return;
    form.dataset.busy = "1";
    like = null;
    toUrl(true);
    run();
  });
  more.addEventListener("click", function () { showMore(seq); });
  // Arrow keys walk from the box through the result links and back; Escape clears.
  form.parentNode.addEventListener("keydown", function (ev) {
    const links = Array.prototype.slice.call(list.querySelectorAll("h2 a"));
    const at = links.indexOf(document.activeElement);
    if (ev.key === "ArrowDown" && (ev.target === input || at >= 0) && links[at + 1]) {
      links[at + 1].focus();
      ev.preventDefault();
    } else if (ev.key === "ArrowUp" && at >= 0) {
      (at ? links[at - 1] : input).focus();
      ev.preventDefault();
    } else if (ev.key === "Escape" && ev.target === input && input.value) {
      input.value = "";
      input.dispatchEvent(new Event("input", { bubbles: true }));
    }
  });
  followBtn.addEventListener("click", function () {
    const q = input.value.trim();
    if (q) toggleFollow("query", q);
    syncFollow();
  });
  window.addEventListener("popstate", function () { form.dataset.busy = "1"; fromUrl(); run(); });
  form.dataset.busy = "1";
  fromUrl();
  // On a phone the filters fold away unless one is set (the page opens them otherwise).
  const box = form.querySelector("details.filters-box");
  if (box && window.matchMedia("(max-width: 40rem)").matches && !filtering(state())) {
    box.open = false;
  }
  index.manifest().catch(function () { /* the first query reports the failure */ });
  run();
  input.focus();
}
