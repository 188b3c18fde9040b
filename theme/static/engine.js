// PaperTrail's search engine over the sharded index under search/ (docs/SEARCH.md): the
// tokeniser, term shards and postings, prefix and one-edit expansion, facets and filters,
// ranking, and where a text matches. Pure: no DOM, no network of its own. createIndex is
// handed a function that loads an index file by its path (site.js fetches; the unit tests
// in tests/js read objects), and loads only the manifest, the shards of the query's terms
// and the chunks of the docs asked for.

export const CLOCKS = ["updated", "first_seen", "published"];
const PREFIX_MIN = 2;
// A word of FUZZY_MIN letters or more that the index lacks (and nothing completes) takes
// the indexed words one edit away: "difusion" finds diffusion.
const FUZZY_MIN = 5;
// Combining marks, each on its own: what NFKD splits off a letter (as index/search.py's _MARKS).
// eslint-disable-next-line no-misleading-character-class
const MARKS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;
const CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff";
const TOKEN = new RegExp("[0-9]{4}\\.[0-9]{4,5}|[0-9a-z\u0370-\u03ff\u0400-\u04ff]+|[" + CJK + "]+", "g");
const IS_CJK = new RegExp("^[" + CJK + "]");
const DAY = 24 * 60;
const RANGES = { "24h": DAY, "7d": 7 * DAY, "30d": 30 * DAY };
// An author as a phrase: au:"Ling Yang" (or au:Yang) keeps only papers with that author,
// a quoted "Ling Yang" ranks them first; either way exact names come before names that
// only contain it. Checked on the best-scored candidates' records, which it fetches.
const AUTHOR = /(?:^|\s)au:\s*(?:"([^"]*)"?|(\S+))|"([^"]+)"/i;
const PHRASE_CANDIDATES = 300;
// Each two neighbouring words are one term "a_b" (index/search.py's pairs, the same
// PAIR_SKIP): a quoted phrase requires its pairs, and any query ranks papers holding its
// words together higher. The index keeps the pairs of two papers or more.
const PAIR_SKIP = new Set(["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in",
  "into", "is", "it", "its", "of", "on", "or", "our", "that", "the", "this", "to", "via", "we",
  "with"]);
// A pair's score counts a quarter: the best of 0, ¼, ½ and 1 on the judged queries
// (bench/search_quality.py), if by little.
const PAIR_BOOST = 0.25;
// "Did you mean": a word of FUZZY_MIN letters or more in fewer than SUGGEST_BELOW papers
// looks at the words one edit away; one in SUGGEST_RATIO times as many papers (and at
// least SUGGEST_MIN) is suggested.
const SUGGEST_BELOW = 5, SUGGEST_RATIO = 10, SUGGEST_MIN = 5;
// A venue query ("CVPR") ranks its papers by tier: main conference, findings, workshop,
// journal (index/search.py's TIERS), then the rest.
export const TIERS = ["main", "findings", "workshop", "journal"];

export function normalise(text) { return text.normalize("NFKD").replace(MARKS, "").toLowerCase(); }

// Mirrors pipeline/site/index/search.py tokens(): words, whole arXiv ids, CJK bigrams.
export function tokens(text) {
  const out = [];
  (normalise(text).match(TOKEN) || []).forEach(function (tok) {
    if (IS_CJK.test(tok)) {
      if (tok.length === 1) out.push(tok);
      for (let i = 0; i + 1 < tok.length; i++) out.push(tok.slice(i, i + 2));
    } else if (tok.length > 1 || /^[0-9]$/.test(tok)) {
      out.push(tok);
    }
  });
  return out;
}

// A query's terms; the last word is still being typed unless the query ends in a space:
// it expands as a prefix.
export function queryTerms(query) {
  const terms = tokens(query);
  const open = !/\s$/.test(query);
  return terms.map(function (t, i) {
    const last = open && i === terms.length - 1;
    const prefix = last && (IS_CJK.test(t) ? t.length === 1 : t.length >= PREFIX_MIN &&
      !/^[0-9.]+$/.test(t));
    return { term: t, prefix: prefix };
  });
}

// The "a_b" terms of a text's tokens: neighbouring words of Latin letters and digits,
// PAIR_SKIP's words left out ("chain of thought" → chain_thought).
export function pairs(terms) {
  const words = terms.filter(function (t) { return !PAIR_SKIP.has(t) && /^[0-9a-z]+$/.test(t); });
  const out = [];
  for (let i = 0; i + 1 < words.length; i++) out.push(words[i] + "_" + words[i + 1]);
  return out;
}

// FNV-1a over UTF-8, as pipeline/site/index/search.py's fnv1a: which shard holds a term.
export function fnv1a(term) {
  const bytes = new TextEncoder().encode(term);
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i];
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

// One edit apart: a letter added, dropped, changed, or two neighbours swapped.
export function oneEdit(a, b) {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  if (a.length === b.length) {
    return a.slice(i + 1) === b.slice(i + 1) ||  // changed
      (a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2));  // swapped
  }
  return a.length < b.length ? a.slice(i) === b.slice(i + 1) : a.slice(i + 1) === b.slice(i);
}

// Where the query's terms occur in `text`: for each character, whether it is part of one
// (a term starts a word; a term being typed may end inside one; CJK anywhere).
export function marked(text, terms) {
  let norm = "";
  const map = [];
  for (let i = 0; i < text.length; i++) {
    const n = normalise(text[i]);
    for (let j = 0; j < n.length; j++) { norm += n[j]; map.push(i); }
  }
  const marks = new Array(text.length).fill(false);
  terms.forEach(function (t) {
    const cjk = IS_CJK.test(t.term);
    let from = 0, at;
    while ((at = norm.indexOf(t.term, from)) >= 0) {
      from = at + 1;
      const before = at === 0 ? "" : norm[at - 1];
      if (!cjk && /[0-9a-z]/.test(before)) continue;
      const end = at + t.term.length;
      if (!cjk && !t.prefix && end < norm.length && /[0-9a-z]/.test(norm[end])) continue;
      for (let k = map[at]; k <= map[end - 1]; k++) marks[k] = true;
    }
  });
  return marks;
}

// `text` cut into [part, is a term] runs, in order.
export function runs(text, terms) {
  const marks = marked(text, terms);
  const out = [];
  let start = 0;
  for (let p = 1; p <= text.length; p++) {
    if (p === text.length || marks[p] !== marks[start]) {
      out.push([text.slice(start, p), marks[start]]);
      start = p;
    }
  }
  return out;
}

// The sentence of `text` holding the most of the query's terms (the first of equals), or
// "" when none holds one; past `max` characters, the words around its first term, cut at
// spaces, with "…" where it was cut. A period ends a sentence only before a space and a
// capital letter, so "e.g. a" and "Fig. 2" do not end one.
export function sentence(text, terms, max) {
  const parts = text.split(/(?<=[.!?])\s+(?=[A-Z(\u201c"])/);
  let best = "", score = 0;
  parts.forEach(function (s) {
    const n = terms.filter(function (t) { return marked(s, [t]).some(Boolean); }).length;
    if (n > score) { best = s.trim(); score = n; }
  });
  if (!max || best.length <= max) return best;
  const first = marked(best, terms).indexOf(true);
  let start = Math.max(0, Math.min(first - Math.floor(max / 3), best.length - max));
  if (start > 0) start = best.indexOf(" ", start - 1) + 1;
  let end = Math.min(best.length, start + max);
  if (end < best.length) end = Math.max(best.lastIndexOf(" ", end), first + 1);
  return (start > 0 ? "…" : "") + best.slice(start, end).trim() + (end < best.length ? "…" : "");
}

// Terms whose postings were capped can't be required (their list is partial): they only
// add score, unless every term is capped. Any of these options filters the results.
export function filtering(opts) {
  return !!(opts.cat || opts.topic || opts.ai || opts.rev || opts.hf || opts.venue ||
            RANGES[opts.range]);
}

// A time in minutes since 1970 in the zone {id, label}, as built pages write one.
const formats = {};
export function localTime(minutes, zone) {
  const f = formats[zone.id] || (formats[zone.id] = new Intl.DateTimeFormat("en-CA", {
    timeZone: zone.id, year: "numeric", month: "2-digit", day: "2-digit",
    hour: "2-digit", minute: "2-digit", hourCycle: "h23" }));
  const p = {};
  f.formatToParts(new Date(minutes * 60000)).forEach(function (x) { p[x.type] = x.value; });
  return p.year + "-" + p.month + "-" + p.day + " " + p.hour + ":" + p.minute + " " + zone.label;
}

// A result's venue as its badge says it, with its tier ("CVPR 2026 · 主会") when the
// manifest words it; a venue known by its DOI alone as the site words it.
export function venueLabel(d, state) {
  if (d.venue === "DOI") return state.published;
  const said = d.tier && state.tiers[d.tier];
  return said ? said.replace("{value}", d.venue) : d.venue;
}

// Records are arrays in the order the manifest's "fields" names (docs/SEARCH.md): read by
// name here, so no other module knows a position.
export function record(m, kind, row) {
  const out = {};
  m.fields[kind].forEach(function (name, i) { out[name] = row[i]; });
  if ("flags" in out) out.is = flagsOf(m, out.flags);
  return out;
}
function flagsOf(m, bits) {
  const out = {};
  m.fields.flag.forEach(function (name, i) { out[name] = (bits & (1 << i)) !== 0; });
  return out;
}

// The index over `load(path) → Promise<parsed file>`, each path loaded once. `state`
// holds what the manifest says of the site: its zone, how it words a DOI-only venue, and
// from which paper on papers have a page.
export function createIndex(load) {
  const cache = {};
  function get(path) { return cache[path] || (cache[path] = load(path)); }
  const state = { zone: { id: "UTC", label: "UTC" }, published: "DOI", pagesFrom: null, tiers: {} };

  function manifest() {
    return get("search/manifest.json").then(function (m) {
      if (m.timezone) state.zone = { id: m.timezone, label: m.tz_label || m.timezone };
      if (m.published) state.published = m.published;
      if (m.tiers) state.tiers = m.tiers;  // "{value} · 主会": how a result says its tier
      state.pagesFrom = m.pages_from || null;  // [updated, id] of the oldest page kept
      return m;
    });
  }

  function shard(m, term) { return get("search/t/" + (fnv1a(term) % m.shards) + ".json.gz"); }

  // One query term → {docs: Map(doc → score), capped, suggest}; a prefix takes its
  // expansions, a long word the index lacks the words one edit away. `suggest`: a word
  // one edit away in many more papers (SUGGEST_RATIO), or null.
  function lookup(m, q) {
    return shard(m, q.term).then(function (s) {
      const names = [q.term];
      if (q.prefix) (s.prefixes[q.term] || []).forEach(function (t) { if (names.indexOf(t) < 0) names.push(t); });
      const own = s.terms[q.term] ? record(m, "term", s.terms[q.term]).df : 0;
      if (names.length > 1 || own >= SUGGEST_BELOW || q.term.length < FUZZY_MIN ||
          !/^[a-z]+$/.test(q.term)) return postings(m, names);
      return near(m, q.term).then(function (close) {
        return Promise.all(close.map(function (t) { return dfOf(m, t); })).then(function (dfs) {
          let best = -1;
          dfs.forEach(function (n, i) { if (best < 0 || n > dfs[best]) best = i; });
          const suggest = best >= 0 && dfs[best] >= Math.max(SUGGEST_MIN, SUGGEST_RATIO * own)
            ? close[best] : null;
          return postings(m, own ? names : close).then(function (p) {
            p.suggest = suggest;
            return p;
          });
        });
      });
    });
  }

  function dfOf(m, term) {
    return shard(m, term).then(function (s) { return s.terms[term] ? record(m, "term", s.terms[term]).df : 0; });
  }

  // The docs holding every one of these pairs, or null when there is none or the index
  // lacks one (a phrase of one paper: searched as its words).
  function holdingAll(m, list) {
    if (!list.length) return Promise.resolve(null);
    return Promise.all(list.map(function (t) { return postings(m, [t]); })).then(function (found) {
      if (found.some(function (f) { return !f.docs.size; })) return null;
      const out = new Set(found[0].docs.keys());
      found.slice(1).forEach(function (f) { out.forEach(function (d) { if (!f.docs.has(d)) out.delete(d); }); });
      return out;
    });
  }

  // Postings are [doc gap, score] pairs; a doc found by several names keeps its best.
  function postings(m, names) {
    return Promise.all(names.map(function (t) {
      return shard(m, t).then(function (x) { return x.terms[t]; });
    })).then(function (entries) {
      const docs = new Map();
      let capped = false;
      entries.forEach(function (row) {
        if (!row) return;
        const e = record(m, "term", row);
        capped = capped || e.capped === 1;
        const flat = e.postings;
        let doc = 0;
        for (let i = 0; i < flat.length; i += 2) {
          doc += flat[i];
          const prev = docs.get(doc) || 0;
          if (flat[i + 1] > prev) docs.set(doc, flat[i + 1]);
        }
      });
      return { docs: docs, capped: capped };
    });
  }

  // Indexed words one edit from `term`, among the completions the index keeps for its
  // prefixes: three more shards at most.
  function near(m, term) {
    const heads = [3, 4, term.length - 1].map(function (n) { return term.slice(0, n); })
      .filter(function (h, i, all) { return all.indexOf(h) === i; });
    return Promise.all(heads.map(function (h) { return shard(m, h); })).then(function (shards) {
      const out = [];
      shards.forEach(function (s, i) {
        (s.prefixes[heads[i]] || []).forEach(function (t) {
          if (out.indexOf(t) < 0 && oneEdit(term, t)) out.push(t);
        });
      });
      return out;
    });
  }

  // The files under `dir` (`size` docs each) holding these docs, loaded → at(d, read):
  // read(file, d's index in it).
  function holding(dir, size, list) {
    const keys = Object.keys(list.reduce(function (o, d) { o[Math.floor(d / size)] = 1; return o; }, {}));
    return Promise.all(keys.map(function (k) { return get(dir + k + ".json.gz"); })).then(function (files) {
      const byKey = {};
      keys.forEach(function (k, i) { byKey[k] = files[i]; });
      return function (d, read) { return read(byKey[Math.floor(d / size)], d % size); };
    });
  }

  function facets(m, docs) {
    return holding("search/f/", m.facet_block, docs).then(function (at) {
      const seen = new Map();  // a sort asks for the same doc many times
      function read(b, i) {
        const out = {};
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

  // A query's results: {docs (doc numbers, best first), terms (the query's), rank(doc)}.
  function search(query, opts) {
    const phrase = AUTHOR.exec(query);
    const name = phrase && (phrase[1] || phrase[2] || phrase[3] || "").trim();
    if (name) return byAuthor(query.replace(phrase[0], " ") + " " + name + " ", name,
                              !phrase[3], opts || {});
    return manifest().then(function (m) {
      const english = translated(query, m.glossary || {});
      const relevance = CLOCKS.indexOf((opts || {}).sort) < 0;
      const found = english === query ? words(query, opts)
        : Promise.all([words(query, opts), words(english, opts)]).then(function (both) {
          return union(both, relevance);
        });
      const venue = relevance ? venueOf(m, query) : null;
      return venue ? found.then(function (r) { return byTier(r, venue); }) : found;
    });
  }

  // A venue query's papers in tier order (TIERS), those at the venue first; within a
  // tier, the order the scores gave. Reads the best-scored candidates' records.
  function byTier(r, venue) {
    const head = r.docs.slice(0, PHRASE_CANDIDATES);
    return docs(head).then(function (records) {
      const rank = new Map();
      records.forEach(function (d, i) {
        const at = d.venue && contains(tokens(d.venue), venue);
        const t = TIERS.indexOf(d.tier);
        rank.set(head[i], at ? (t < 0 ? TIERS.length : t) : TIERS.length + 1);
      });
      return { docs: reranked(head, rank).concat(r.docs.slice(PHRASE_CANDIDATES)),
               terms: r.terms, rank: r.rank, suggest: r.suggest };
    });
  }

  // au:"Name" keeps the papers with that author; a quoted "phrase" of two words or more
  // keeps those holding them next to each other, in order (its pairs), or with an author
  // so named: exact names first, then names holding it, then the phrase in the text. A
  // phrase whose pairs the index lacks (one paper's) is looked for in the candidates'
  // titles and TL;DRs.
  function byAuthor(query, name, only, opts) {
    const want = normalise(name).split(/\s+/).join(" ");
    const phrase = only ? [] : pairs(tokens(name));
    return manifest().then(function (m) {
      return Promise.all([words(query, opts), holdingAll(m, phrase)]);
    }).then(function (both) {
      const r = both[0], held = both[1];
      const head = r.docs.slice(0, PHRASE_CANDIDATES);
      return docs(head).then(function (records) {
        const rank = new Map();
        records.forEach(function (d, i) {
          const names = d.authors.map(function (a) { return normalise(a).split(/\s+/).join(" "); });
          const exact = names.indexOf(want) >= 0;
          const within = !exact && names.some(function (a) {
            return (" " + a + " ").indexOf(" " + want + " ") >= 0;
          });
          const inText = held ? held.has(head[i])
            : phrase.length > 0 && contains(pairs(tokens(d.title + " " + d.tldr)), phrase);
          rank.set(head[i], exact ? 0 : within ? 1 : inText ? 2 : 3);
        });
        const rest = r.docs.slice(PHRASE_CANDIDATES);
        const kept = only ? head.filter(function (d) { return rank.get(d) < 2; })
          : phrase.length ? head.filter(function (d) { return rank.get(d) < 3; })
            .concat(held ? rest.filter(function (d) { return held.has(d); }) : [])
          : head.concat(rest);
        return { docs: reranked(kept, rank), terms: r.terms, rank: r.rank, suggest: r.suggest };
      });
    });
  }

  function words(query, opts) {
    opts = opts || {};
    const terms = queryTerms(query);
    if (!terms.length) {
      return filtering(opts) ? browse(opts) : Promise.resolve({ docs: [], terms: [] });
    }
    // The query's words held together (its pairs) only add score: papers holding them
    // next to each other rank first.
    const together = pairs(terms.filter(function (t) { return !t.prefix; })
      .map(function (t) { return t.term; }));
    return manifest().then(function (m) {
      return Promise.all([Promise.all(terms.map(function (t) { return lookup(m, t); })),
        Promise.all(together.map(function (t) { return postings(m, [t]); }))]).then(function (all) {
        const found = all[0], near = all[1];
        const required = found.filter(function (f) { return !f.capped; });
        const base = required.length ? required : found;
        const scores = new Map();
        const smallest = base.reduce(function (a, b) { return a.docs.size <= b.docs.size ? a : b; });
        smallest.docs.forEach(function (_, d) {
          if (required.length && !required.every(function (f) { return f.docs.has(d); })) return;
          scores.set(d, 0);
        });
        if (!required.length) found.forEach(function (f) { f.docs.forEach(function (_, d) { scores.set(d, 0); }); });
        scores.forEach(function (_, d) {
          let sum = 0;
          found.forEach(function (f) { sum += f.docs.get(d) || 0; });
          near.forEach(function (f) { sum += PAIR_BOOST * (f.docs.get(d) || 0); });
          scores.set(d, sum);
        });
        const suggest = found.some(function (f) { return f.suggest; }) ? terms.map(function (t, i) {
          return found[i].suggest || t.term;
        }).join(" ") : null;
        let docs = Array.from(scores.keys());
        const filtered = filtering(opts) || opts.sort;
        const ready = filtered ? facets(m, docs) : Promise.resolve(null);
        return ready.then(function (fx) {
          if (fx) docs = applyFilters(m, docs, fx, opts);
          const col = CLOCKS.indexOf(opts.sort) >= 0 ? opts.sort : null;
          const rank = col ? function (d) { return fx(d)[col]; }
            : function (d) { return scores.get(d); };
          docs.sort(function (a, b) { return rank(b) - rank(a) || b - a; });
          return { docs: docs, terms: terms, rank: rank, suggest: suggest };
        });
      });
    });
  }

  // No words, only filters: every paper that passes them, newest first on the chosen
  // clock (the HF picks, a category's AI papers of the week…). Reads every facet block once.
  function browse(opts) {
    return manifest().then(function (m) {
      const all = [];
      for (let d = 0; d < m.docs; d++) all.push(d);
      return facets(m, all).then(function (fx) {
        const col = CLOCKS.indexOf(opts.sort) >= 0 ? opts.sort : "updated";
        const docs = applyFilters(m, all, fx, opts);
        const rank = function (d) { return fx(d)[col]; };
        docs.sort(function (a, b) { return rank(b) - rank(a) || b - a; });
        return { docs: docs, terms: [], rank: rank };
      });
    });
  }

  // A paper's similar papers (search/s/: by the hash of its id, its own doc number first,
  // then theirs, most similar first) as a result: {docs, terms, of: its own record}.
  function similarTo(id) {
    const none = { docs: [], terms: [] };
    return manifest().then(function (m) {
      if (!m.similar_shards) return none;
      return get("search/s/" + (fnv1a(id) % m.similar_shards) + ".json.gz").then(function (part) {
        const list = Object.prototype.hasOwnProperty.call(part, id) ? part[id] : null;
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

  // The record of the paper with this id, searched as a query would be (an old-style id
  // is two terms: its record need not come first); undefined when none.
  function paperById(id) {
    return search(id + " ").then(function (r) { return docs(r.docs.slice(0, 8)); })
      .then(function (found) { return found.filter(function (d) { return d.id === id; })[0]; });
  }

  // A paper has a page when it may (its "page" flag) and is no older than the oldest page
  // the site keeps ([site] max_site_mb; the order budget.order gives them).
  function hasPage(doc) {
    const from = state.pagesFrom;
    return doc.is.page && from !== null &&
      (doc.updated > from[0] || (doc.updated === from[0] && doc.id >= from[1]));
  }

  return { state: state, manifest: manifest, search: search, docs: docs, similarTo: similarTo,
    paperById: paperById, hasPage: hasPage };
}

// `list` sorted by rank (a Map; absent: last) and, within a rank, in its own order.
function reranked(list, rank) {
  const order = new Map(list.map(function (d, i) { return [d, i]; }));
  const last = Infinity;
  return list.slice().sort(function (a, b) {
    return (rank.has(a) ? rank.get(a) : last) - (rank.has(b) ? rank.get(b) : last) ||
      order.get(a) - order.get(b);
  });
}

// Whether `words` holds `part`'s words one after another.
function contains(words, part) {
  for (let i = 0; i + part.length <= words.length; i++) {
    if (part.every(function (w, j) { return words[i + j] === w; })) return true;
  }
  return false;
}

// The venue of the manifest's list a query names (its words, in order), or null.
function venueOf(m, query) {
  const words = tokens(query);
  const named = (m.venues || []).map(function (v) { return tokens(v); })
    .filter(function (v) { return v.length && contains(words, v); });
  return named.length ? named[0] : null;
}

function applyFilters(m, docs, fx, opts) {
  const cat = opts.cat ? m.categories.indexOf(opts.cat) : -1;
  const topic = opts.topic ? m.topics.indexOf(opts.topic) : -1;
  // "1": accepted anywhere; else a venue of the manifest's list ("ECCV").
  const venue = opts.venue && opts.venue !== "1" ? (m.venues || []).indexOf(opts.venue) : -1;
  const since = RANGES[opts.range] ? m.as_of - RANGES[opts.range] : null;
  const col = CLOCKS.indexOf(opts.sort) >= 0 ? opts.sort : "updated";
  return docs.filter(function (d) {
    const f = fx(d);
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

// A Chinese query also runs with its known terms in English (扩散模型 → diffusion model):
// the abstracts are English, and only digests are Chinese. The manifest's glossary holds
// the site's topic names and a built-in list of common CS terms.
export function translated(query, glossary) {
  const keys = Object.keys(glossary).sort(function (a, b) { return b.length - a.length; });
  let out = query;
  keys.forEach(function (k) {
    if (out.indexOf(k) >= 0) out = out.split(k).join(" " + glossary[k] + " ");
  });
  return out === query ? query : out.replace(/\s+/g, " ").replace(/^ /, "");
}

// Papers either form finds, each ranked by the better of its two ranks; by relevance,
// those the reader's own words find come first.
function union(found, relevance) {
  const best = new Map();
  found.forEach(function (r) {
    r.docs.forEach(function (d) {
      const v = r.rank(d);
      if (!best.has(d) || v > best.get(d)) best.set(d, v);
    });
  });
  const own = new Set(found[0].docs);
  const docs = Array.from(best.keys());
  docs.sort(function (a, b) {
    return (relevance ? own.has(b) - own.has(a) : 0) || best.get(b) - best.get(a) || b - a;
  });
  return { docs: docs, terms: found[0].terms.concat(found[1].terms),
           rank: function (d) { return best.get(d); }, suggest: found[0].suggest };
}
