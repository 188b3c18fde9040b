// BibTeX as the site's scripts read and write it: scan() reads a library's entries (the
// 为你推荐 importer, recommend.js), write() puts a saved paper's entry back out for the
// follow page's export with what could act on the reader's machine taken out. Pure: no DOM.
//
// An entry is @type{…} or @type(…), as BibTeX allows. Only braces nest: a "(" or ")" in a
// value is text, and a "(…)" entry ends at the first ")" outside every brace. A value is
// {…} (braces balanced), "…" (braces balanced, ends at a quote outside them) or a bare
// word, joined by #. Text between entries is a comment; @comment{…} is skipped whole.
// A line that starts a new entry ends an unclosed one: a broken entry is dropped and the
// ones after it are read, and no part of a file is scanned twice.

const OPEN = /@[ \t\r\n]*([A-Za-z][\w-]*)[ \t\r\n]*([{(])/g;
const SPACE = /[ \t\r\n]*/y;
const NAME = /([A-Za-z][\w.:+/-]*)[ \t\r\n]*=[ \t\r\n]*/y;
const WORD = /[^\s,#{}()"=]+/y;
const ENTRY_START = /@[ \t\r\n]*[A-Za-z][\w-]*[ \t\r\n]*[{(]/y;

// Whether an "@" at i begins a line and an entry: where an unclosed value gives up.
function startsEntry(text, i) {
  let k = i - 1;
  while (k >= 0 && (text[k] === " " || text[k] === "\t")) k--;
  if (k >= 0 && text[k] !== "\n" && text[k] !== "\r") return false;
  ENTRY_START.lastIndex = i;
  return ENTRY_START.test(text);
}

// The index of the brace or quote that ends the value opening at i, or -1 with the index
// where it gave up as { at }.
function valueEnd(text, i) {
  const quoted = text[i] === '"';
  let depth = quoted ? 0 : 1;
  for (let k = i + 1; k < text.length; k++) {
    const c = text[k];
    if (c === "{") depth++;
    else if (c === "}") {
      if (--depth === 0 && !quoted) return k;
      if (depth < 0) return { at: k };
    } else if (c === '"' && quoted && depth === 0) return k;
    else if (c === "@" && startsEntry(text, k)) return { at: k };
  }
  return { at: text.length };
}

function skip(text, j) {
  SPACE.lastIndex = j;
  SPACE.exec(text);
  return SPACE.lastIndex;
}

// An entry's body from i (after its opener) to its closer: {key, fields, end}, or {at}
// where it broke. Field names are lower-cased; the first of a repeated field counts.
function body(text, i, close, withKey) {
  const fields = {};
  let j = skip(text, i), key = "";
  if (withKey) {
    const k = j;
    while (j < text.length && !/[\s,{}"]/.test(text[j]) && !(text[j] === close)) j++;
    key = text.slice(k, j);
    j = skip(text, j);
  }
  for (;;) {
    if (j >= text.length) return { at: j };
    if (text[j] === close) return { key: key, fields: fields, end: j + 1 };
    if (text[j] === ",") { j = skip(text, j + 1); continue; }
    NAME.lastIndex = j;
    const name = NAME.exec(text);
    if (!name && withKey) return { at: j };
    if (name) j = NAME.lastIndex;
    const parts = [];
    for (;;) {
      if (text[j] === "{" || text[j] === '"') {
        const end = valueEnd(text, j);
        if (typeof end !== "number") return end;
        parts.push(text.slice(j + 1, end));
        j = end + 1;
      } else {
        WORD.lastIndex = j;
        const word = WORD.exec(text);
        if (!word) return { at: j };
        parts.push(word[0]);
        j = WORD.lastIndex;
      }
      j = skip(text, j);
      if (text[j] !== "#") break;
      j = skip(text, j + 1);
    }
    if (name) {
      const field = name[1].toLowerCase();
      if (!(field in fields)) fields[field] = parts.join("");
    }
    if (text[j] !== "," && text[j] !== close) return { at: j };
  }
}

// A @comment's extent: its braces balanced (or, in "(…)", up to a ")" outside them).
function commentEnd(text, i, close) {
  let depth = 0;
  for (let k = i; k < text.length; k++) {
    const c = text[k];
    if (c === "{") depth++;
    else if (c === "}" && --depth < 0) return close === "}" ? k + 1 : -1;
    else if (c === ")" && depth === 0 && close === ")") return k + 1;
  }
  return -1;
}

// The entries of a BibTeX text, each {type, key, fields}; @string and @preamble are read
// past, not returned.
export function scan(text) {
  const out = [];
  const open = new RegExp(OPEN.source, "g");
  let m;
  while ((m = open.exec(text))) {
    const type = m[1].toLowerCase(), close = m[2] === "{" ? "}" : ")";
    if (type === "comment") {
      const end = commentEnd(text, open.lastIndex, close);
      if (end < 0) break;
      open.lastIndex = end;
      continue;
    }
    const got = body(text, open.lastIndex, close, type !== "string" && type !== "preamble");
    if (got.end === undefined) {
      open.lastIndex = Math.max(got.at, m.index + 1);
      continue;
    }
    open.lastIndex = got.end;
    if (type !== "string" && type !== "preamble") {
      out.push({ type: type, key: got.key, fields: got.fields });
    }
  }
  return out;
}

// -- writing a saved entry back out ------------------------------------------------------
// TeX that reads or writes files, runs programs or redefines TeX when the file is used:
// taken out of every value (\input{/etc/passwd} keeps only its harmless {/etc/passwd}).
// ^^-notation (^^69nput is \input) goes first, so no command hides behind it.
const UNSAFE = new RegExp("\\\\@*(?:input|include|includeonly|InputIfFileExists|IfFileExists|" +
  "openin|openout|read|readline|write|immediate|closein|closeout|special|directlua|latelua|" +
  "catcode|def|edef|gdef|xdef|let|futurelet|csname|expandafter|newcommand|renewcommand|" +
  "providecommand|DeclareRobustCommand|newenvironment|renewenvironment|usepackage|" +
  "RequirePackage|documentclass|makeatletter|scantokens|everyeof|endinput|shipout|" +
  "verbatiminput|lstinputlisting|includegraphics|pdfobj|pdfximage|pdffiledump)(?![A-Za-z])",
"g");
const LINK = /\\(?:url|href)[ \t\r\n]*\{([^{}]*)\}/g;
const WEB = /^https?:\/\/[^\s{}\\"]+$/i;
const FIELD = /^[a-z][\w-]*$/i;

function safeValue(value) {
  return value.replace(/\^\^/g, "").replace(UNSAFE, "").replace(LINK, function (all, target) {
    return WEB.test(target.trim()) ? all : "";  // \href{javascript:…}{text} keeps its text
  }).replace(/\\+$/, "");  // a backslash before our closing brace would escape it
}

// One entry as BibTeX in the shape app.js writes (the fields one a line, braced): its
// values made safe, a url field kept only when it is http(s), names and key reduced to
// what BibTeX reads, and extra fields (the reader's note) added at the end.
export function write(e, extra) {
  const key = e.key.replace(/[^\w:./+-]/g, "") || "entry";
  const type = /^[a-z]+$/.test(e.type) ? e.type : "misc";
  const fields = Object.keys(e.fields).filter(function (f) { return FIELD.test(f); })
    .map(function (f) { return [f, safeValue(e.fields[f])]; })
    .filter(function (f) { return f[0] !== "url" || WEB.test(f[1].trim()); })
    .concat(extra || []);
  return "@" + type + "{" + key + ",\n" + fields.map(function (f) {
    return "      " + f[0] + "={" + f[1] + "},\n";
  }).join("") + "}";
}
