// What the follow page exports for a fork and a reference manager, without the page: the
// follows as a [[follows]] table for papertrail.toml, and the saved papers as BibTeX.
// Both come from localStorage, which a hand-made import file fills with anything: the
// table holds only what pipeline/config.py accepts, the BibTeX only what bibtex.js's
// write() keeps. Pure: no DOM; follow.js shows them, tests/js/fork.test.mjs tests them.
import { scan, write } from "./bibtex.js";

const TOML_KEYS = [["author", "authors"], ["query", "keywords"], ["category", "categories"],
  ["topic", "topics"]];

// JSON's string escapes are all valid in a TOML basic string, but TOML also forbids a raw
// DEL, and a \uXXXX that is no Unicode scalar value (a lone surrogate: follow.js drops it).
function tomlString(s) { return JSON.stringify(s).replace(/\x7f/g, "\\u007f"); }

// What pipeline/config.py accepts in a [[follows]] list: a phrase or name holds a letter
// or digit and no control character; a category is one of arXiv's and a topic one of the
// site's [[topics]] (the page lists both).
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const WORD = /[\p{L}\p{N}_]/u;
// A followed search for one author (the author links' au:"Name") is that author.
const AUTHOR_QUERY = /^\s*au:\s*(?:"([^"]*)"?|(\S+))\s*$/i;

// A follow as [TOML key, value], or null when the config would refuse it.
function exported(f, known) {
  let kind = f.kind, value = f.value;
  const au = kind === "query" && AUTHOR_QUERY.exec(value);
  if (au) { kind = "author"; value = (au[1] || au[2] || "").trim(); }
  if (kind === "category") return known.categories.has(value) ? ["categories", value] : null;
  if (kind === "topic") return known.topics.has(value) ? ["topics", value] : null;
  if (CONTROL.test(value) || !WORD.test(value)) return null;
  return [kind === "author" ? "authors" : "keywords", value];
}

// One table with only the keys that have values, each list in follow order without
// repeats ("" when there is nothing to export), and the follows' values it left out.
// known: {categories, topics}, the arXiv categories and topic slugs the config defines.
export function tomlSnippet(follows, name, known) {
  const sets = { categories: new Set(known.categories), topics: new Set(known.topics) };
  const lists = {}, left = new Set(), lines = [];
  follows.forEach(function (f) {
    const kv = exported(f, sets);
    if (!kv) { left.add(f.value); return; }
    (lists[kv[0]] = lists[kv[0]] || new Set()).add(kv[1]);
  });
  TOML_KEYS.forEach(function (k) {
    const values = lists[k[1]];
    if (values) lines.push(k[1] + " = [" + Array.from(values).map(tomlString).join(", ") + "]");
  });
  const text = lines.length ? ["[[follows]]", "name = " + tomlString(name)].concat(lines).join("\n") : "";
  return { text: text, left: Array.from(left) };
}

// BibTeX of the saved papers that have an entry, each rewritten by bibtex.js's write()
// (no TeX that reads or writes files, no url that is not http(s)), its note as the annote
// field Zotero and JabRef import. An entry that does not read as BibTeX is left out.
export function savedBibtex(saved) {
  return saved.map(function (x) {
    const e = scan(x.bibtex)[0];
    if (!e) return null;
    const note = x.note.replace(/[{}\\]/g, "").replace(/\s+/g, " ").trim();
    return write(e, note ? [["annote", note]] : []);
  }).filter(Boolean).join("\n\n") + "\n";
}
