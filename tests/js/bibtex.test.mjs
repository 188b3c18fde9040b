// Unit tests of the BibTeX reader and writer (theme/static/bibtex.js) with node's own runner.
import assert from "node:assert/strict";
import { test } from "node:test";

import { scan, write } from "../../theme/static/bibtex.js";

function titles(text) { return scan(text).map(function (e) { return e.fields.title; }); }

test("parentheses in a braced entry are text: a numbered abstract keeps its entry whole", function () {
  const text = "@article{a, title={First}, abstract={We do 1) this and 2) that (mostly).}, year=2024}\n" +
    "@article{b, title={Second}}\n";
  const got = scan(text);
  assert.deepEqual(got.map(function (e) { return e.key; }), ["a", "b"]);
  assert.equal(got[0].fields.abstract, "We do 1) this and 2) that (mostly).");
  assert.equal(got[0].fields.year, "2024");
});

test("a title with ':(' loses none of the entries after it", function () {
  const text = "@misc{a, title={Sad results :(}}\n@misc{b, title={B}}\n" +
    "@misc{c, title = \"C (part\"}\n@misc{d, title={D}}\n";
  assert.deepEqual(titles(text), ["Sad results :(", "B", "C (part", "D"]);
});

test("a (…) entry ends at the first ) outside every brace", function () {
  const text = '@misc(k, title = {A) b}, note = "c)" # {d}, year = 2020)\n@misc{n, title={Next}}';
  const got = scan(text);
  assert.deepEqual(got.map(function (e) { return e.fields.title; }), ["A) b", "Next"]);
  assert.equal(got[0].fields.note, "c)d");
  assert.equal(got[0].fields.year, "2020");
});

test("braces nest in values and a quote inside braces does not end a quoted value", function () {
  const [e] = scan('@article{k, title = "A {"} b {{Deep}} c", author={{Ann} and {Bo}}}');
  assert.equal(e.fields.title, 'A {"} b {{Deep}} c');
  assert.equal(e.fields.author, "{Ann} and {Bo}");
  assert.equal(e.type, "article");
});

test("@comment, @string and @preamble give no entries, and the first of a repeated field counts", function () {
  const text = "@comment{ @article{x, title={hidden}} }\n@string{foo = \"bar\"}\n" +
    "@preamble{\"\\newcommand{\\x}{y}\"}\nfree text @ here\n@book{k, title={One}, title={Two}}";
  assert.deepEqual(titles(text), ["One"]);
});

test("a broken entry is dropped and the next line's entry is read", function () {
  const text = "@article{a, title={Unclosed (x}\n@article{b, title={Kept}}\n" +
    "@article{c, title {no equals sign}} @article{d, title={D}}\n";
  assert.deepEqual(titles(text), ["Kept", "D"]);
});

test("an entry with no fields, or a trailing comma, still counts", function () {
  assert.deepEqual(scan("@misc{only}\n@misc{t, title={T},\n}").map(function (e) { return e.key; }),
    ["only", "t"]);
});

test("write takes out TeX that reads or writes files, and urls that are not http(s)", function () {
  const [e] = scan("@misc{k#ey, title={A \\input{/etc/passwd} \\write18{rm -rf ~} B " +
    "^^5cinput{/etc/shadow} \\emph{ok} $\\alpha$}, url={javascript:alert(1)}, " +
    "howpublished={\\href{javascript:alert(2)}{click} \\url{https://arxiv.org/abs/1}}, " +
    "note={\\immediate\\openout1=x \\csname input\\endcsname{y} \\@input{z}}, bad:field={x}}");
  const text = write(e, [["annote", "mine"]]);
  assert.doesNotMatch(text, /\\(input|write|immediate|openout|csname|@input)|\^\^|javascript/);
  const [back] = scan(text);  // what it wrote reads back as one entry
  assert.equal(back.key, "key");
  assert.equal(back.fields.title, "A {/etc/passwd} 18{rm -rf ~} B 5cinput{/etc/shadow} \\emph{ok} $\\alpha$");
  assert.equal(back.fields.url, undefined);
  assert.equal(back.fields.howpublished, "{click} \\url{https://arxiv.org/abs/1}");
  assert.equal(back.fields.annote, "mine");
  assert.deepEqual(Object.keys(back.fields), ["title", "howpublished", "note", "annote"]);
});

test("write keeps an http(s) url and a value's braces balanced", function () {
  // BibTeX counts every brace, \\} too: the title ends there, its backslash is dropped.
  const [e] = scan("@misc{k, title={{Deep} nets\\}, url={https://arxiv.org/abs/2606.00001}}");
  assert.equal(e.fields.title, "{Deep} nets\\");
  const [back] = scan(write(e));
  assert.equal(back.fields.url, "https://arxiv.org/abs/2606.00001");
  assert.equal(back.fields.title, "{Deep} nets");
});
