// A paper as a result card (the search page's, the follow page's, 为你推荐's, 404.html's)
// and the links and times cards show. Data is rendered as text nodes only, never markup.
import { localTime, runs, sentence, venueLabel } from "./engine.js";
import { fetchJSON, fetchText, index, root } from "./site.js";

export function paperUrl(doc) {
  return index.hasPage(doc) ? root + "paper/" + doc.id + ".html" : "https://arxiv.org/abs/" + doc.id;
}

// An author's papers: their name searched as a phrase (a quote in a name would end it).
export function authorUrl(name) {
  return root + "search/?q=" + encodeURIComponent('au:"' + name.replace(/"/g, " ").trim() + '"');
}

// Times show in the site's zone, with its label, as every built page does; the index's
// manifest names the zone, and is read before any result is shown.
export function local(minutes) { return localTime(minutes, index.state.zone); }

// A result's meta line: its id, version, the time on `clock` and its categories.
export function metaLine(d, clock) {
  return "arXiv:" + d.id + " · v" + d.version + " · " + local(d[clock]) + " · " +
    d.categories.join(" ");
}

// `text` into `el` with the query's terms wrapped in <mark>, node by node.
export function highlight(el, text, terms) {
  runs(text, terms).forEach(function (run) {
    if (run[1]) {
      const mk = document.createElement("mark");
      mk.textContent = run[0];
      el.appendChild(mk);
    } else {
      el.appendChild(document.createTextNode(run[0]));
    }
  });
}

// A result card: the meta line given, the title linking to the paper, the authors, and
// where asked (o.tldr) the digest's TL;DR, or for a paper without one the sentence of its
// abstract that holds the query's terms; the terms marked.
export function card(d, o) {
  const terms = o.terms || [];
  const li = document.createElement("li");
  li.className = "card" + (o.fresh ? " fresh" : "");
  li.dataset.id = d.id;
  const meta = document.createElement("p");
  meta.className = "meta";
  meta.textContent = o.meta;
  if (d.venue) {  // where it was accepted, as the pages' badge says
    const venue = document.createElement("span");
    venue.className = "venue";
    venue.textContent = venueLabel(d, index.state);
    meta.appendChild(document.createTextNode(" "));
    meta.appendChild(venue);
  }
  const h = document.createElement(o.heading || "h3");  // under the page's h1 or an h2
  const a = document.createElement("a");
  a.href = paperUrl(d);
  highlight(a, d.title, terms);
  h.appendChild(a);
  const authors = document.createElement("p");
  authors.className = "authors";
  d.authors.forEach(function (name, i) {
    const link = document.createElement("a"), bdi = document.createElement("bdi");
    link.href = authorUrl(name);
    highlight(bdi, name, terms);
    link.appendChild(bdi);
    if (i) authors.appendChild(document.createTextNode(", "));
    authors.appendChild(link);
  });
  if (d.n_authors > d.authors.length) authors.appendChild(document.createTextNode(" …"));
  li.appendChild(meta);
  li.appendChild(h);
  li.appendChild(authors);
  if (o.tldr && d.tldr) {
    const tldr = document.createElement("p");
    tldr.className = "tldr";
    highlight(tldr, d.tldr, terms);
    li.appendChild(tldr);
  } else if (o.tldr && terms.length && index.hasPage(d)) {
    matchedSentence(li, d, terms);
  }
  if (o.moreLike) {  // the papers most like it, as results here (it may have no page)
    const like = document.createElement("a");
    like.className = "more-like";
    like.href = root + "search/?like=" + encodeURIComponent(d.id);
    like.textContent = o.moreLike;
    like.setAttribute("aria-label", o.moreLike + " · " + d.title);  // one link per card
    li.appendChild(like);
  }
  return li;
}

// The sentence of a paper's abstract that holds the query's terms, under its authors once
// fetched. The abstract comes from the paper's own page (or, for a light page, its shard:
// pipeline/site/pages/paper.py), which the site holds anyway, so the index carries no
// abstracts. Parsed inert (DOMParser runs no script and loads nothing) and read as text.
const SENTENCE_CHARS = 160;  // as long as a digest's line (_search.TLDR_CHARS)
const abstracts = new Map();
function parsed(html) { return new DOMParser().parseFromString(html, "text/html"); }
function abstractText(page) {
  const p = page.querySelector("details.abstract p");
  return p ? p.textContent.replace(/\s+/g, " ").trim() : "";
}
function abstractOf(id) {
  if (!abstracts.has(id)) {
    abstracts.set(id, fetchText("paper/" + id + ".html").then(function (html) {
      const page = parsed(html);
      if (!page.querySelector("article.paper[data-light]")) return abstractText(page);
      return fetchJSON("paper/shards/" + id.slice(0, -2) + ".json.gz").then(function (shard) {
        return Object.prototype.hasOwnProperty.call(shard, id) ? abstractText(parsed(shard[id][1])) : "";
      });
    }).catch(function () { return ""; }));  // no sentence is better than a broken card
  }
  return abstracts.get(id);
}

function matchedSentence(li, d, terms) {
  li.dataset.snippet = "…";  // tests wait on this: the sentence, or that there is none
  abstractOf(d.id).then(function (text) {
    const found = text && sentence(text, terms, SENTENCE_CHARS);
    if (found) {
      const p = document.createElement("p");
      p.className = "snippet";
      p.lang = "en";  // arXiv's abstracts are English
      highlight(p, found, terms);
      li.querySelector("p.authors").after(p);
    }
    delete li.dataset.snippet;
  });
}
