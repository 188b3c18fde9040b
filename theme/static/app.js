// PaperTrail: every page's script, the one each page loads. It refreshes the home page's
// numbers every minute from status.json, no reload; on a light paper page, fetches its
// article from its shard; on a paper page, puts the nav and ui.js's boxes in place, makes
// and copies its BibTeX, shows its changes side by side on a wide screen and, on a phone,
// folds its abstract under its digest; then starts search.js and follow.js, which fill
// those boxes.
// Reading works without scripts (the abstract then stays open; a paper page links home
// but shows no nav and no BibTeX, the citation tags in the head are what reference
// managers read; a light page shows its title and arXiv link).
import * as follow from "./follow.js";
import * as search from "./search.js";
import { fetchJSON, root } from "./site.js";
// What paper pages show only through their scripts, in the site's language: made by the
// build from theme/templates/ui.js.
import ui from "./ui.js";

const REFRESH_MS = 60 * 1000;

function show(key, value) {
  const nodes = document.querySelectorAll('[data-stat="' + key + '"]');
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i];
    if (key === "degraded") {
      node.hidden = !value;
    } else if (typeof value === "number") {
      const text = value.toLocaleString("en-US");
      node.textContent = /^(new_|revised)/.test(key) ? "+" + text : text;
    } else {
      node.textContent = String(value);
    }
  }
}

function refresh() {
  fetch(root + "status.json", { cache: "no-store" })
    .then(function (r) { return r.ok ? r.json() : null; })
    .then(function (status) {
      if (!status) return;
      Object.keys(status).forEach(function (key) {
        const v = status[key];
        if (typeof v === "number" || typeof v === "boolean" || typeof v === "string") show(key, v);
      });
    })
    .catch(function () { /* offline: keep what the page shows */ });
}

if (document.querySelector("[data-stat]")) setInterval(refresh, REFRESH_MS);

// -- a paper page's BibTeX entry, in arXiv's own shape (its "Export BibTeX citation") --
function tags(name) {
  return Array.prototype.map.call(document.querySelectorAll('meta[name="' + name + '"]'),
    function (m) { return m.content; });
}

// data: the entry's primaryClass, and the title as written (TeX) when it reads otherwise.
function bibtex(data) {
  const title = tags("citation_title")[0], authors = tags("citation_author");
  const id = tags("citation_arxiv_id")[0], year = tags("citation_date")[0].slice(0, 4);
  const fields = [["title", braced(data.tex || title)],
    ["author", authors.map(braced).join(" and ")], ["year", year], ["eprint", id],
    ["archivePrefix", "arXiv"], ["primaryClass", braced(data.primary)],
    ["url", "https://arxiv.org/abs/" + id]];
  tags("citation_doi").forEach(function (doi) { fields.push(["doi", braced(doi)]); });
  return "@misc{" + citeKey(authors[0] || "", year, title) + ",\n" + fields.map(function (f) {
    return "      " + f[0] + "={" + f[1] + "},\n";
  }).join("") + "}";
}

// Words a citation key skips, as Google Scholar's and arXiv's keys do.
const SMALL = ["a", "an", "the", "on", "of", "for", "in", "to", "and", "with", "via", "towards",
  "toward", "from", "by", "at", "is", "are", "do", "does"];
// "lastname2026word": the first author's family name, the year, the title's first
// significant word, in ASCII letters and digits (names in other scripts give none).
function citeKey(first, year, title) {
  const family = words(first).pop() || "";
  const significant = words(ascii(title)).filter(function (w) {
    return SMALL.indexOf(w.toLowerCase()) < 0;
  });
  return (ascii(family).replace(/ /g, "") + year + (significant[0] || "")).toLowerCase();
}
function words(text) { return text.split(/\s+/).filter(Boolean); }
// Letters and digits folded to ASCII (Å → A), everything else a space.
function ascii(text) {
  return text.normalize("NFKD").replace(/[\u0080-\uffff]/g, "").replace(/[^A-Za-z0-9]+/g, " ");
}

// Text safe inside a BibTeX field's braces. Titles and names are untrusted: a brace that
// does not pair would end the field early and let the rest become BibTeX of its own, so
// their braces are kept only when they pair (BibTeX counts them all, escaped or not).
function braced(text) {
  text = words(text).join(" ");
  if (!/[{}\\]/.test(text)) return text;  // most titles and names: nothing to pair
  // A backslash before a brace (or at the end, before ours) would escape it for parsers.
  text = text.replace(/\\+(?=[{}]|$)/g, "").trim();
  let depth = 0;
  for (let i = 0; i < text.length && depth >= 0; i++) {
    depth += text[i] === "{" ? 1 : text[i] === "}" ? -1 : 0;
  }
  return depth === 0 ? text : text.replace(/[{}]/g, "");
}

// A paper page carries neither the site's nav nor the boxes only scripts fill (the save
// box, the BibTeX block, the follow buttons, the similar papers): ui.js holds them once,
// in the site's language, and they are put in place here, before the other scripts run.
// Without scripts the page keeps its brand link home.
function paperPage(paper) {
  paper.querySelector(".links").insertAdjacentHTML("afterend", ui.tools);
  if (paper.dataset.similar) {
    paper.insertAdjacentHTML("beforeend", ui.similar);
    paper.querySelector("section[data-similar]").dataset.similar = paper.dataset.similar;
  }
  // The BibTeX entry, made from the page's citation tags: carried in the page, it was
  // 0.56 KB of every page's ~7. Its block stays hidden without this script, and so does
  // the button that copies it.
  const cite = document.getElementById("bibtex");
  if (cite) {
    cite.textContent = bibtex(paper.dataset);
    cite.closest("details").hidden = false;
  }
  const copy = document.querySelector("button[data-copy]");
  if (copy) {
    copy.hidden = !navigator.clipboard;
    copy.addEventListener("click", function () {
      navigator.clipboard.writeText(document.getElementById(copy.dataset.copy).textContent)
        .then(function () { copy.textContent = copy.dataset.copied; });
    });
  }
  // On a wide screen each change that both removed and added words reads side by side:
  // the version before with its removed words beside the new one with its added words,
  // both made from the one inline diff the page carries.
  if (window.matchMedia("(min-width: 60rem)").matches) {
    const diffs = paper.querySelectorAll(".timeline li[data-version] p.diff");
    for (let d = 0; d < diffs.length; d++) sideBySide(diffs[d]);
  }
  // The digest is what a phone reader came for; the abstract is one tap away.
  if (window.matchMedia("(max-width: 40rem)").matches) {
    const folds = paper.querySelectorAll("details[data-fold-narrow]");
    for (let i = 0; i < folds.length; i++) folds[i].open = false;
  }
}
function sideBySide(diff) {
  if (!diff.querySelector("del") || !diff.querySelector("ins")) return;
  const version = Number(diff.closest("li").dataset.version);
  const pair = document.createElement("div");
  pair.className = "side-by-side";
  [["ins", version - 1], ["del", version]].forEach(function (side) {
    const half = diff.cloneNode(true);
    half.querySelector(".label").textContent += " · v" + side[1];
    half.querySelectorAll(side[0]).forEach(function (x) { x.remove(); });
    pair.appendChild(half);
  });
  diff.hidden = true;  // kept: it is what the page says without this script
  diff.after(pair);
}

// A light page ([site] max_site_mb): its article and citation tags wait in the shard its
// id names (pipeline/site/pages/paper.py), fetched and put in place here. They are the
// build's own HTML, escaped as a full page's is. Then the scripts a full page runs, in
// the same order, now that the boxes they fill are there; on a failure too (the nav's
// search still works).
function lightPage(shell) {
  const id = shell.dataset.light;
  return fetchJSON("paper/shards/" + id.slice(0, -2) + ".json.gz")
    .then(function (shard) {
      const entry = Object.prototype.hasOwnProperty.call(shard, id) ? shard[id] : null;
      if (!entry) throw new Error(id);
      document.head.insertAdjacentHTML("beforeend", entry[0]);
      shell.outerHTML = entry[1];
      paperPage(document.querySelector("article.paper[data-primary]"));
    })
    .catch(function (err) {
      const note = document.createElement("p");
      note.className = "note";
      note.textContent = ui.light_failed.replace("{error}", String(err.message || err));
      shell.appendChild(note);
    });
}

// search.js and follow.js, once the boxes they fill are in place.
function start() {
  search.start();
  follow.start();
}

const light = document.querySelector("article.paper[data-light]");
const paper = document.querySelector("article.paper[data-primary]");
// The nav's links start from the page's relative root, as the build writes links: "../"
// a folder below the site's root.
function relativeRoot() {
  const below = location.pathname.slice(new URL(root).pathname.length);
  return "../".repeat(below.split("/").length - 1);
}

if (light || paper) {
  document.querySelector(".top .brand")
    .insertAdjacentHTML("afterend", ui.top.split(ui.root).join(relativeRoot()));
}
if (light) lightPage(light).then(start);
else {
  if (paper) paperPage(paper);
  start();
}
