// PaperTrail search: a client for the sharded index under search/ (docs/SEARCH.md).
// The engine (window.PTSearch) fetches only the manifest, the shards of the query's terms
// and the doc chunks it shows; the UI runs on the search page. Data is rendered with
// textContent only.
(function () {
  "use strict";
  var script = document.currentScript;
  var root = script ? script.src.replace(/theme\/search\.js(\?.*)?$/, "") : "";
  // The first screen shows 4-5 results, and each result may need its own doc chunk (one
  // request): a short first page is a fast one.
  var PAGE = 8;
  // Keystrokes closer than this are one burst, searched when it ends: a fast typist's
  // (~100 ms a key); slower typing searches at every key.
  var BURST_MS = 100;
  var PREFIX_MIN = 2;
  var MARKS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;
  var CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff";
  var TOKEN = new RegExp("[0-9]{4}\\.[0-9]{4,5}|[0-9a-z\u0370-\u03ff\u0400-\u04ff]+|[" + CJK + "]+", "g");
  var IS_CJK = new RegExp("^[" + CJK + "]");
  var ID = "([0-9]{4}\\.[0-9]{4,5}|[a-z][a-z.-]*/[0-9]{7})";  // an arXiv id, new or old style
  var ARXIV = new RegExp("^(?:arxiv:\\s*)?" + ID + "(?:v[0-9]+)?$", "i");
  var ARXIV_URL = new RegExp("^(?:https?://)?(?:www\\.|export\\.)?arxiv\\.org/(?:abs|pdf|html)/" +
    ID + "(?:v[0-9]+)?(?:\\.pdf)?/?$", "i");
  var PAPER_PATH = new RegExp("^paper/" + ID + "\\.html$", "i");  // a paper page's, from root
  var DAY = 24 * 60;
  var RANGES = { "24h": DAY, "7d": 7 * DAY, "30d": 30 * DAY };
  var CLOCKS = ["updated", "first_seen", "published"];

  function normalise(text) { return text.normalize("NFKD").replace(MARKS, "").toLowerCase(); }

  // Mirrors pipeline/site/index/search.py tokens(): words, whole arXiv ids, CJK bigrams.
  function tokens(text) {
    var out = [];
    var m = normalise(text).match(TOKEN) || [];
    m.forEach(function (tok) {
      if (IS_CJK.test(tok)) {
        if (tok.length === 1) out.push(tok);
        for (var i = 0; i + 1 < tok.length; i++) out.push(tok.slice(i, i + 2));
      } else if (tok.length > 1 || /^[0-9]$/.test(tok)) {
        out.push(tok);
      }
    });
    return out;
  }

  // The last word is still being typed unless the query ends in a space: expand it.
  function queryTerms(query) {
    var terms = tokens(query);
    var open = !/\s$/.test(query);
    return terms.map(function (t, i) {
      var last = open && i === terms.length - 1;
      var prefix = last && (IS_CJK.test(t) ? t.length === 1 : t.length >= PREFIX_MIN &&
        !/^[0-9.]+$/.test(t));
      return { term: t, prefix: prefix };
    });
  }

  function fnv1a(term) {
    var bytes = new TextEncoder().encode(term);
    var h = 0x811c9dc5;
    for (var i = 0; i < bytes.length; i++) {
      h ^= bytes[i];
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return h;
  }

  // Shards, chunks and facet blocks are stored gzipped (*.json.gz: a size-bound host counts
  // stored bytes) and inflated here; a server that sent them decoded hands over plain JSON.
  function inflate(r) {
    return r.arrayBuffer().then(function (buf) {
      var b = new Uint8Array(buf);
      if (b[0] !== 0x1f || b[1] !== 0x8b) return new TextDecoder().decode(b);
      return new Response(new Blob([b]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
    }).then(JSON.parse);
  }

  var cache = {};
  function load(path) {
    if (!cache[path]) {
      cache[path] = fetch(root + path).then(function (r) {
        if (!r.ok) throw new Error(path + ": HTTP " + r.status);
        return /\.gz$/.test(path) ? inflate(r) : r.json();
      });
    }
    return cache[path];
  }
  // Times show in the site's zone, with its label, as every built page does; the manifest
  // names the zone, and is read before any result is shown.
  var zone = { id: "UTC", label: "UTC" };
  var published = "DOI";  // a venue known only by a DOI, as the pages' badge words it
  var pagesFrom = null;  // [updated, id] of the oldest paper page kept; null: none is
  function manifest() {
    return load("search/manifest.json").then(function (m) {
      if (m.timezone) zone = { id: m.timezone, label: m.tz_label || m.timezone };
      if (m.published) published = m.published;
      pagesFrom = m.pages_from || null;
      return m;
    });
  }

  // Records are arrays in the order the manifest's "fields" names (docs/SEARCH.md): read
  // by name here, so neither this file nor follow.js knows a position.
  function record(m, kind, row) {
    var out = {};
    m.fields[kind].forEach(function (name, i) { out[name] = row[i]; });
    if ("flags" in out) out.is = flagsOf(m, out.flags);
    return out;
  }
  function flagsOf(m, bits) {
    var out = {};
    m.fields.flag.forEach(function (name, i) { out[name] = (bits & (1 << i)) !== 0; });
    return out;
  }
  function shard(m, term) { return load("search/t/" + (fnv1a(term) % m.shards) + ".json.gz"); }

  // One query term → {docs: Map(doc → score), capped}; a prefix takes the best expansion.
  // A word of FUZZY_MIN letters or more that the index lacks (and nothing completes) takes
  // the indexed words one edit away: "difusion" finds diffusion.
  var FUZZY_MIN = 5;
  function lookup(m, q) {
    return shard(m, q.term).then(function (s) {
      var names = [q.term];
      if (q.prefix) (s.prefixes[q.term] || []).forEach(function (t) { if (names.indexOf(t) < 0) names.push(t); });
      if (names.length > 1 || s.terms[q.term] || q.term.length < FUZZY_MIN ||
          !/^[a-z]+$/.test(q.term)) return postings(m, names);
      return near(m, q.term).then(function (close) { return postings(m, close); });
    });
  }

  function postings(m, names) {
    return Promise.all(names.map(function (t) {
      return shard(m, t).then(function (x) { return x.terms[t]; });
    })).then(function (entries) {
      var docs = new Map();
      var capped = false;
      entries.forEach(function (row) {
        if (!row) return;
        var e = record(m, "term", row);
        capped = capped || e.capped === 1;
        var flat = e.postings, doc = 0;
        for (var i = 0; i < flat.length; i += 2) {
          doc += flat[i];
          var prev = docs.get(doc) || 0;
          if (flat[i + 1] > prev) docs.set(doc, flat[i + 1]);
        }
      });
      return { docs: docs, capped: capped };
    });
  }

  // Indexed words one edit (a letter added, dropped, changed, or two swapped) from `term`,
  // among the completions the index keeps for its prefixes: three more shards at most.
  function near(m, term) {
    var heads = [3, 4, term.length - 1].map(function (n) { return term.slice(0, n); })
      .filter(function (h, i, all) { return all.indexOf(h) === i; });
    return Promise.all(heads.map(function (h) { return shard(m, h); })).then(function (shards) {
      var out = [];
      shards.forEach(function (s, i) {
        (s.prefixes[heads[i]] || []).forEach(function (t) {
          if (out.indexOf(t) < 0 && oneEdit(term, t)) out.push(t);
        });
      });
      return out;
    });
  }

  function oneEdit(a, b) {
    if (a === b || Math.abs(a.length - b.length) > 1) return false;
    var i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    if (a.length === b.length) {
      return a.slice(i + 1) === b.slice(i + 1) ||  // changed
        (a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2));  // swapped
    }
    return a.length < b.length ? a.slice(i) === b.slice(i + 1) : a.slice(i + 1) === b.slice(i);
  }

  // The files under `dir` (`size` docs each) holding these docs, loaded → at(d, read):
  // read(file, d's index in it).
  function holding(dir, size, list) {
    var keys = Object.keys(list.reduce(function (o, d) { o[Math.floor(d / size)] = 1; return o; }, {}));
    return Promise.all(keys.map(function (k) { return load(dir + k + ".json.gz"); })).then(function (files) {
      var byKey = {};
      keys.forEach(function (k, i) { byKey[k] = files[i]; });
      return function (d, read) { return read(byKey[Math.floor(d / size)], d % size); };
    });
  }

  function facets(m, docs) {
    return holding("search/f/", m.facet_block, docs).then(function (at) {
      var seen = new Map();  // a sort asks for the same doc many times
      function read(b, i) {
        var out = {};
        m.fields.facet.forEach(function (name) { out[name] = b[name][i]; });
        out.is = flagsOf(m, out.flags);
        return out;
      }
      return function (d) {
        if (!seen.has(d)) seen.set(d, at(d, read));
        return seen.get(d);
      };
    });
  }

  // Terms whose postings were capped can't be required (their list is partial): they
  // only add score, unless every term is capped.
  function filtering(opts) {
    return !!(opts.cat || opts.topic || opts.ai || opts.rev || opts.hf || opts.venue ||
              RANGES[opts.range]);
  }

  // An author as a phrase: au:"Ling Yang" (or au:Yang) keeps only papers with that author,
  // a quoted "Ling Yang" ranks them first; either way exact names come before names that
  // only contain it. Checked on the best-scored candidates' records, which it fetches.
  var AUTHOR = /(?:^|\s)au:\s*(?:"([^"]*)"?|(\S+))|"([^"]+)"/i;
  var PHRASE_CANDIDATES = 300;

  function search(query, opts) {
    var phrase = AUTHOR.exec(query);
    var name = phrase && (phrase[1] || phrase[2] || phrase[3] || "").trim();
    if (name) return byAuthor(query.replace(phrase[0], " ") + " " + name + " ", name,
                              !phrase[3], opts || {});
    return manifest().then(function (m) {
      var english = translated(query, m.glossary || {});
      if (english === query) return words(query, opts);
      return Promise.all([words(query, opts), words(english, opts)]).then(function (found) {
        return union(found, CLOCKS.indexOf((opts || {}).sort) < 0);
      });
    });
  }

  // A Chinese query also runs with its known terms in English (扩散模型 → diffusion model):
  // the abstracts are English, and only digests are Chinese. The manifest's glossary holds
  // the site's topic names and a built-in list of common CS terms.
  function translated(query, glossary) {
    var keys = Object.keys(glossary).sort(function (a, b) { return b.length - a.length; });
    var out = query;
    keys.forEach(function (k) {
      if (out.indexOf(k) >= 0) out = out.split(k).join(" " + glossary[k] + " ");
    });
    return out === query ? query : out.replace(/\s+/g, " ").replace(/^ /, "");
  }

  // Papers either form finds, each ranked by the better of its two ranks; by relevance,
  // those the reader's own words find come first.
  function union(found, relevance) {
    var best = new Map();
    found.forEach(function (r) {
      r.docs.forEach(function (d) {
        var v = r.rank(d);
        if (!best.has(d) || v > best.get(d)) best.set(d, v);
      });
    });
    var own = new Set(found[0].docs);
    var docs = Array.from(best.keys());
    docs.sort(function (a, b) {
      return (relevance ? own.has(b) - own.has(a) : 0) || best.get(b) - best.get(a) || b - a;
    });
    return { docs: docs, terms: found[0].terms.concat(found[1].terms),
             rank: function (d) { return best.get(d); } };
  }

  function byAuthor(query, name, only, opts) {
    var want = normalise(name).split(/\s+/).join(" ");
    return words(query, opts).then(function (r) {
      var head = r.docs.slice(0, PHRASE_CANDIDATES);
      return docs(head).then(function (records) {
        var rank = new Map();
        records.forEach(function (d, i) {
          var names = d.authors.map(function (a) { return normalise(a).split(/\s+/).join(" "); });
          var exact = names.indexOf(want) >= 0;
          var within = !exact && names.some(function (a) {
            return (" " + a + " ").indexOf(" " + want + " ") >= 0;
          });
          rank.set(head[i], exact ? 0 : within ? 1 : 2);
        });
        var kept = only ? head.filter(function (d) { return rank.get(d) < 2; })
          : head.concat(r.docs.slice(PHRASE_CANDIDATES));
        // A stable sort: within a rank, the order the scores or the clock gave.
        var order = new Map(kept.map(function (d, i) { return [d, i]; }));
        kept.sort(function (a, b) {
          return (rank.has(a) ? rank.get(a) : 2) - (rank.has(b) ? rank.get(b) : 2) ||
            order.get(a) - order.get(b);
        });
        return { docs: kept, terms: r.terms, rank: r.rank };
      });
    });
  }

  function words(query, opts) {
    opts = opts || {};
    var terms = queryTerms(query);
    if (!terms.length) {
      return filtering(opts) ? browse(opts) : Promise.resolve({ docs: [], terms: [] });
    }
    return manifest().then(function (m) {
      return Promise.all(terms.map(function (t) { return lookup(m, t); })).then(function (found) {
        var required = found.filter(function (f) { return !f.capped; });
        var base = required.length ? required : found;
        var scores = new Map();
        var smallest = base.reduce(function (a, b) { return a.docs.size <= b.docs.size ? a : b; });
        smallest.docs.forEach(function (_, d) {
          if (required.length && !required.every(function (f) { return f.docs.has(d); })) return;
          scores.set(d, 0);
        });
        if (!required.length) found.forEach(function (f) { f.docs.forEach(function (_, d) { scores.set(d, 0); }); });
        scores.forEach(function (_, d) {
          var sum = 0;
          found.forEach(function (f) { sum += f.docs.get(d) || 0; });
          scores.set(d, sum);
        });
        var docs = Array.from(scores.keys());
        var filtered = filtering(opts) || opts.sort;
        var ready = filtered ? facets(m, docs) : Promise.resolve(null);
        return ready.then(function (fx) {
          if (fx) docs = applyFilters(m, docs, fx, opts);
          var col = CLOCKS.indexOf(opts.sort) >= 0 ? opts.sort : null;
          var rank = col ? function (d) { return fx(d)[col]; }
            : function (d) { return scores.get(d); };
          docs.sort(function (a, b) { return rank(b) - rank(a) || b - a; });
          return { docs: docs, terms: terms, rank: rank };
        });
      });
    });
  }

  // No words, only filters: every paper that passes them, newest first on the chosen clock
  // (the HF picks, a category's AI papers of the week…). Reads every facet block once.
  function browse(opts) {
    return manifest().then(function (m) {
      var all = [];
      for (var d = 0; d < m.docs; d++) all.push(d);
      return facets(m, all).then(function (fx) {
        var col = CLOCKS.indexOf(opts.sort) >= 0 ? opts.sort : "updated";
        var docs = applyFilters(m, all, fx, opts);
        var rank = function (d) { return fx(d)[col]; };
        docs.sort(function (a, b) { return rank(b) - rank(a) || b - a; });
        return { docs: docs, terms: [], rank: rank };
      });
    });
  }

  function applyFilters(m, docs, fx, opts) {
    var cat = opts.cat ? m.categories.indexOf(opts.cat) : -1;
    var topic = opts.topic ? m.topics.indexOf(opts.topic) : -1;
    // "1": accepted anywhere; else a venue of the manifest's list ("ECCV").
    var venue = opts.venue && opts.venue !== "1" ? (m.venues || []).indexOf(opts.venue) : -1;
    var since = RANGES[opts.range] ? m.as_of - RANGES[opts.range] : null;
    var col = CLOCKS.indexOf(opts.sort) >= 0 ? opts.sort : "updated";
    return docs.filter(function (d) {
      var f = fx(d);
      if (opts.cat && f.categories.indexOf(cat) < 0) return false;
      if (opts.topic && f.topics.indexOf(topic) < 0) return false;
      if (opts.ai && !f.is.ai) return false;
      if (opts.rev && !f.is.revised) return false;
      if (opts.hf && !f.is.hf) return false;
      if (opts.venue && !f.is.venue) return false;
      if (opts.venue && opts.venue !== "1" && f.venue !== venue) return false;
      return since === null || f[col] > since;
    });
  }

  // A paper's similar papers (search/s/: by the hash of its id, its own doc number first,
  // then theirs, most similar first) as a result: {docs, terms, of: its own record}.
  function similarTo(id) {
    var none = { docs: [], terms: [] };
    return manifest().then(function (m) {
      if (!m.similar_shards) return none;
      return load("search/s/" + (fnv1a(id) % m.similar_shards) + ".json.gz").then(function (part) {
        var list = Object.prototype.hasOwnProperty.call(part, id) ? part[id] : null;
        if (!list) return none;
        return docs([list[0]]).then(function (own) {
          return { docs: list.slice(1), terms: [], of: own[0] };
        });
      });
    });
  }

  // Doc records (id, title, authors, …: the manifest's fields.doc) in the order asked.
  function docs(list) {
    return manifest().then(function (m) {
      return holding("search/d/", m.chunk, list).then(function (at) {
        return list.map(function (d) {
          return at(d, function (chunk, i) { return record(m, "doc", chunk[i]); });
        });
      });
    });
  }

  // A paper has a page here when it may (its "page" flag) and is no older than the oldest
  // page the site keeps ([site] max_site_mb; the order _budget.order gives them).
  function hasPage(doc) {
    var from = pagesFrom;
    return doc.is.page && from !== null &&
      (doc.updated > from[0] || (doc.updated === from[0] && doc.id >= from[1]));
  }
  function paperUrl(doc) {
    return hasPage(doc) ? root + "paper/" + doc.id + ".html" : "https://arxiv.org/abs/" + doc.id;
  }

  // An author's papers: their name searched as a phrase (a quote in a name would end it).
  function authorUrl(name) {
    return root + "search/?q=" + encodeURIComponent('au:"' + name.replace(/"/g, " ").trim() + '"');
  }

  var formats = {};
  function local(minutes) {
    var f = formats[zone.id] || (formats[zone.id] = new Intl.DateTimeFormat("en-CA", {
      timeZone: zone.id, year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", hourCycle: "h23" }));
    var p = {};
    f.formatToParts(new Date(minutes * 60000)).forEach(function (x) { p[x.type] = x.value; });
    return p.year + "-" + p.month + "-" + p.day + " " + p.hour + ":" + p.minute + " " + zone.label;
  }

  // A result card (the search page's and the follow page's): the meta line given, the
  // title linking to the paper, the authors, and the digest's TL;DR where asked; the
  // query's terms marked. Text only, never markup.
  function card(d, o) {
    var terms = o.terms || [];
    var li = document.createElement("li");
    li.className = "card" + (o.fresh ? " fresh" : "");
    li.dataset.id = d.id;
    var meta = document.createElement("p");
    meta.className = "meta";
    meta.textContent = o.meta;
    if (d.venue) {  // where it was accepted, as the pages' badge says
      var venue = document.createElement("span");
      venue.className = "venue";
      venue.textContent = d.venue === "DOI" ? published : d.venue;
      meta.appendChild(document.createTextNode(" "));
      meta.appendChild(venue);
    }
    var h = document.createElement(o.heading || "h3");  // under the page's h1 or an h2
    var a = document.createElement("a");
    a.href = paperUrl(d);
    highlight(a, d.title, terms);
    h.appendChild(a);
    var authors = document.createElement("p");
    authors.className = "authors";
    d.authors.forEach(function (name, i) {
      var link = document.createElement("a"), bdi = document.createElement("bdi");
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
      var tldr = document.createElement("p");
      tldr.className = "tldr";
      highlight(tldr, d.tldr, terms);
      li.appendChild(tldr);
    }
    if (o.moreLike) {  // the papers most like it, as results here (it may have no page)
      var like = document.createElement("a");
      like.className = "more-like";
      like.href = root + "search/?like=" + encodeURIComponent(d.id);
      like.textContent = o.moreLike;
      like.setAttribute("aria-label", o.moreLike + " · " + d.title);  // one link per card
      li.appendChild(like);
    }
    return li;
  }

  // An arXiv id or URL → its page here when the index knows it, else arxiv.org.
  function arxivTarget(query) {
    var q = query.trim();
    var m = q.match(ARXIV_URL) || q.match(ARXIV);
    if (!m) return null;
    var id = m[1].toLowerCase();
    return paperById(id).then(function (hit) {
      return hit ? paperUrl(hit) : "https://arxiv.org/abs/" + id;
    }, function () { return "https://arxiv.org/abs/" + id; });
  }

  // The index's record of the paper with this id, searched as a query would be (an
  // old-style id is two terms: its record need not come first); undefined when none.
  function paperById(id) {
    return search(id + " ").then(function (r) { return docs(r.docs.slice(0, PAGE)); })
      .then(function (found) { return found.filter(function (d) { return d.id === id; })[0]; });
  }

  // A result's meta line: its id, version, the time on `clock` and its categories.
  function metaLine(d, clock) {
    return "arXiv:" + d.id + " · v" + d.version + " · " + local(d[clock]) + " · " +
      d.categories.join(" ");
  }

  // Text with the query's terms wrapped in <mark>, built node by node.
  function highlight(el, text, terms) {
    var norm = "", map = [];
    for (var i = 0; i < text.length; i++) {
      var n = normalise(text[i]);
      for (var j = 0; j < n.length; j++) { norm += n[j]; map.push(i); }
    }
    var marks = new Array(text.length + 1).fill(false);
    terms.forEach(function (t) {
      var cjk = IS_CJK.test(t.term);
      var from = 0, at;
      while ((at = norm.indexOf(t.term, from)) >= 0) {
        from = at + 1;
        var before = at === 0 ? "" : norm[at - 1];
        if (!cjk && /[0-9a-z]/.test(before)) continue;
        var end = at + t.term.length;
        if (!cjk && !t.prefix && end < norm.length && /[0-9a-z]/.test(norm[end])) continue;
        for (var k = map[at]; k <= map[end - 1]; k++) marks[k] = true;
      }
    });
    var start = 0;
    for (var p = 1; p <= text.length; p++) {
      if (p === text.length || marks[p] !== marks[start]) {
        var part = text.slice(start, p);
        if (marks[start]) {
          var mk = document.createElement("mark");
          mk.textContent = part;
          el.appendChild(mk);
        } else {
          el.appendChild(document.createTextNode(part));
        }
        start = p;
      }
    }
  }

  window.PTSearch = { search: search, docs: docs, tokens: tokens, normalise: normalise,
    manifest: manifest, record: record, paperUrl: paperUrl, local: local, card: card,
    highlight: highlight, arxivTarget: arxivTarget };

  // -- header quick search: an id jumps, anything else opens the search page ------------
  document.querySelectorAll("form.quick").forEach(function (form) {
    form.addEventListener("submit", function (ev) {
      var target = arxivTarget(form.elements.q.value);
      if (!target) return;
      ev.preventDefault();
      target.then(function (url) { location.href = url; });
    });
  });

  // The pages' author names become links to their search; the search needs this script,
  // so without it they stay plain names.
  document.querySelectorAll("p.authors bdi").forEach(function (bdi) {
    var link = document.createElement("a");
    link.href = authorUrl(bdi.textContent);
    bdi.parentNode.replaceChild(link, bdi);
    link.appendChild(bdi);
  });

  var missing = document.getElementById("missing-paper");
  if (missing) missingPaper(missing);

  var similar = document.querySelector("section[data-similar]");
  if (similar) similarPapers(similar);

  var form = document.getElementById("search");
  if (form) page(form);

  // 404.html, served for any address the site lacks: a paper page's address names its
  // paper, shown here from the index (its title linking to arXiv when it has no page).
  // The address is untrusted: only an id of arXiv's grammar is read from it.
  function missingPaper(section) {
    var path = location.pathname.slice(new URL(root, location.href).pathname.length);
    var m = path.match(PAPER_PATH);
    if (!m) return;
    var id = m[1], why = document.getElementById("missing-why");
    var list = document.getElementById("missing-result");
    section.hidden = false;
    section.dataset.busy = "1";  // tests wait on this: the paper, or why not, is on screen
    paperById(id).then(function (d) {
      if (d) {  // it may have its page after all (a deploy under way): then no "why"
        why.textContent = hasPage(d) ? "" : section.dataset.gone.replace("{id}", id);
        document.title = d.title + " · " + document.title;
        list.appendChild(card(d, { heading: "h2", tldr: true, moreLike: section.dataset.moreLike,
          meta: metaLine(d, "updated") }));
      } else {
        why.textContent = section.dataset.unknown.replace("{id}", id) + " ";
        var a = document.createElement("a");
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
    similarTo(section.dataset.similar).then(function (r) { return docs(r.docs); })
      .then(function (found) {
        var list = section.querySelector("ol");
        found.forEach(function (d) {
          var li = document.createElement("li"), a = document.createElement("a");
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
    var input = form.elements.q;
    var status = document.getElementById("search-status");
    var list = document.getElementById("results");
    var more = document.getElementById("more");
    var followBtn = document.getElementById("follow-query");
    var KEYS = ["q", "cat", "topic", "ai", "rev", "hf", "venue", "range", "sort"];
    var timer = null, seq = 0, current = null, shown = 0;
    var like = null;  // ?like=ID: that paper's similar papers are the results, until a query

    function state() {
      var st = {};
      KEYS.forEach(function (k) {
        var el = form.elements[k];
        st[k] = el.type === "checkbox" ? (el.checked ? "1" : "") : el.value;
      });
      return st;
    }
    function fromUrl() {
      var params = new URLSearchParams(location.search);
      KEYS.forEach(function (k) {
        var el = form.elements[k], v = params.get(k) || "";
        if (el.type === "checkbox") el.checked = v === "1"; else el.value = v;
      });
      like = params.get("like");
    }
    function toUrl(push) {
      var st = state(), params = new URLSearchParams();
      KEYS.forEach(function (k) { if (st[k]) params.set(k, st[k]); });
      if (like) params.set("like", like);
      var qs = params.toString();
      var url = location.pathname + (qs ? "?" + qs : "");
      if (url === location.pathname + location.search) return;
      history[push ? "pushState" : "replaceState"](null, "", url);
    }

    function syncFollow() {
      var q = input.value.trim();
      var api = window.PTFollow;
      followBtn.hidden = !q || !api;
      if (!api || !q) return;
      var on = api.has("query", q);
      followBtn.setAttribute("aria-pressed", on ? "true" : "false");
      followBtn.textContent = on ? form.dataset.following + " · " + q : form.dataset.follow;
    }

    function run() {
      var st = state();
      var mine = ++seq;
      syncFollow();
      var likeOnly = like && !st.q.trim();
      if (!st.q.trim() && !filtering(st) && !likeOnly) {
        list.textContent = "";
        status.textContent = "";
        more.hidden = true;
        delete form.dataset.busy;
        return Promise.resolve();
      }
      status.textContent = form.dataset.loading;
      return (likeOnly ? similarTo(like) : search(st.q, st)).then(function (r) {
        if (mine !== seq) return null;
        current = r;
        shown = 0;
        list.textContent = "";
        if (!r.docs.length) {
          status.textContent = form.dataset.none;
          more.hidden = true;
          delete form.dataset.busy;
          return null;
        }
        var n = r.docs.length.toLocaleString();
        if (r.of) {  // "与《title》最相似的 n 篇论文", the title linking to the paper
          var around = form.dataset.like.replace("{n}", n).split("{title}");
          var of = document.createElement("a");
          of.href = paperUrl(r.of);
          of.textContent = r.of.title;
          status.textContent = around[0];
          status.appendChild(of);
          status.appendChild(document.createTextNode(around.slice(1).join("")));
        } else {
          status.textContent = form.dataset.count.replace("{n}", n);
        }
        return showMore(mine);
      }).catch(function (err) {
        if (mine !== seq) return;
        status.textContent = String(err.message || err);
        delete form.dataset.busy;
      });
    }

    function showMore(mine) {
      var slice = current.docs.slice(shown, shown + PAGE);
      shown += slice.length;
      more.hidden = shown >= current.docs.length;
      return docs(slice).then(function (records) {
        if (mine !== seq) return;
        var sort = form.elements.sort.value;
        var clock = CLOCKS.indexOf(sort) >= 0 ? sort : "updated";
        records.forEach(function (d) {
          list.appendChild(card(d, { heading: "h2", terms: current.terms, tldr: true,
            moreLike: form.dataset.moreLike, meta: metaLine(d, clock) }));
        });
        delete form.dataset.busy;  // tests and scripts wait on this: results are on screen
      });
    }

    // A keystroke after a pause searches at once; a burst of keystrokes searches once,
    // when it ends: the words half typed in it are never fetched.
    var lastKey = 0;
    input.addEventListener("input", function () {
      clearTimeout(timer);
      seq++;  // a search still in flight is stale now: it must not render nor clear busy
      form.dataset.busy = "1";
      var pasted = input.value.trim().match(ARXIV_URL);
      like = null;
      var go = function () {
        if (pasted) { jump(); return; }
        toUrl(false);
        run();
      };
      var now = Date.now(), paused = now - lastKey > BURST_MS;
      lastKey = now;
      if (paused) go();
      else timer = setTimeout(go, BURST_MS);
    });
    function jump() {
      var target = arxivTarget(input.value);
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
      var links = Array.prototype.slice.call(list.querySelectorAll("h2 a"));
      var at = links.indexOf(document.activeElement);
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
      var q = input.value.trim();
      if (q && window.PTFollow) window.PTFollow.toggle("query", q);
      syncFollow();
    });
    window.addEventListener("popstate", function () { form.dataset.busy = "1"; fromUrl(); run(); });
    form.dataset.busy = "1";
    fromUrl();
    // On a phone the filters fold away unless one is set (the page opens them otherwise).
    var box = form.querySelector("details.filters-box");
    if (box && window.matchMedia("(max-width: 40rem)").matches && !filtering(state())) {
      box.open = false;
    }
    manifest().catch(function () { /* the first query reports the failure */ });
    run();
    // follow.js runs after this file (both deferred, in order): a query that came in the
    // URL shows its follow button once follow.js is there, before DOMContentLoaded.
    document.addEventListener("DOMContentLoaded", syncFollow);
    input.focus();
  }
})();
