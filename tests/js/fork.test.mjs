// Unit tests of what the follow page exports (theme/static/fork.js): the [[follows]] table
// for a fork's papertrail.toml and the saved papers' BibTeX, from hostile storage.
import assert from "node:assert/strict";
import { test } from "node:test";

import { scan } from "../../theme/static/bibtex.js";
import { savedBibtex, tomlSnippet } from "../../theme/static/fork.js";

const KNOWN = { categories: ["cs.CV", "cs.LG"], topics: ["llm-agents"] };

test("only topics and categories the site's config defines are exported; the rest is listed", function () {
  const got = tomlSnippet([
    { kind: "topic", value: "llm-agents" }, { kind: "topic", value: "gone-topic" },
    { kind: "topic", value: "x\"]\n[evil]" }, { kind: "category", value: "cs.CV" },
    { kind: "category", value: "math.XX" }, { kind: "query", value: 'au:"Ann Lee"' },
    { kind: "query", value: "diffusion" }, { kind: "query", value: "bell\u0007" },
    { kind: "topic", value: "llm-agents" },
  ], "Mine", KNOWN);
  assert.equal(got.text, '[[follows]]\nname = "Mine"\nauthors = ["Ann Lee"]\nkeywords = ["diffusion"]\n' +
    'categories = ["cs.CV"]\ntopics = ["llm-agents"]');
  assert.deepEqual(got.left, ["gone-topic", "x\"]\n[evil]", "math.XX", "bell\u0007"]);
});

test("no follow the config accepts: nothing to export", function () {
  assert.deepEqual(tomlSnippet([{ kind: "topic", value: "nope" }], "n", KNOWN), { text: "", left: ["nope"] });
});

test("saved BibTeX is exported without file-reading TeX or non-http urls, with the note", function () {
  const saved = [
    { id: "2606.00001", note: "read {this}\\", bibtex: "@misc{yang2026diffusion,\n      title={Diffusion " +
      "\\input{/etc/passwd}},\n      url={javascript:alert(1)},\n      eprint={2606.00001},\n}" },
    { id: "2606.00002", note: "", bibtex: "" },
    { id: "2606.00003", note: "", bibtex: "not bibtex at all" },
    { id: "2606.00004", note: "", bibtex: "@misc{k, title={Fine}, url={https://arxiv.org/abs/2606.00004}}" },
  ];
  const text = savedBibtex(saved);
  assert.doesNotMatch(text, /\\input|javascript/);
  const got = scan(text);
  assert.deepEqual(got.map(function (e) { return e.key; }), ["yang2026diffusion", "k"]);
  assert.deepEqual(got[0].fields, { title: "Diffusion {/etc/passwd}", eprint: "2606.00001", annote: "read this" });
  assert.equal(got[1].fields.url, "https://arxiv.org/abs/2606.00004");
});
