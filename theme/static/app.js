// PaperTrail: refresh the home page's numbers every minute from status.json, no reload;
// on a paper page, copy its BibTeX, show its changes side by side on a wide screen and,
// on a phone, fold its abstract under its digest.
// Reading works without this script (the abstract then stays open, the BibTeX selectable).
(function () {
  "use strict";
  var script = document.currentScript;
  var root = script ? script.src.replace(/theme\/app\.js(\?.*)?$/, "") : "";
  var REFRESH_MS = 60 * 1000;

  function show(key, value) {
    var nodes = document.querySelectorAll('[data-stat="' + key + '"]');
    for (var i = 0; i < nodes.length; i++) {
      var node = nodes[i];
      if (key === "degraded") {
        node.hidden = !value;
      } else if (typeof value === "number") {
        var text = value.toLocaleString("en-US");
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
          var v = status[key];
          if (typeof v === "number" || typeof v === "boolean" || typeof v === "string") show(key, v);
        });
      })
      .catch(function () { /* offline: keep what the page shows */ });
  }

  if (document.querySelector("[data-stat]")) setInterval(refresh, REFRESH_MS);

  // A copy button per block it copies (the BibTeX entry); without a script it stays hidden.
  var copies = document.querySelectorAll("button[data-copy]");
  for (var c = 0; c < copies.length; c++) {
    copies[c].hidden = !navigator.clipboard;
    copies[c].addEventListener("click", function (e) {
      var button = e.currentTarget;
      var source = document.getElementById(button.dataset.copy);
      navigator.clipboard.writeText(source.textContent).then(function () {
        button.textContent = button.dataset.copied;
      });
    });
  }

  // On a wide screen each change that both removed and added words reads side by side:
  // the version before with its removed words beside the new one with its added words,
  // both made from the one inline diff the page carries.
  if (window.matchMedia("(min-width: 60rem)").matches) {
    var diffs = document.querySelectorAll(".timeline li[data-version] p.diff");
    for (var d = 0; d < diffs.length; d++) sideBySide(diffs[d]);
  }
  function sideBySide(diff) {
    if (!diff.querySelector("del") || !diff.querySelector("ins")) return;
    var version = Number(diff.closest("li").dataset.version);
    var pair = document.createElement("div");
    pair.className = "side-by-side";
    [["ins", version - 1], ["del", version]].forEach(function (side) {
      var half = diff.cloneNode(true);
      half.querySelector(".label").textContent += " · v" + side[1];
      half.querySelectorAll(side[0]).forEach(function (x) { x.remove(); });
      pair.appendChild(half);
    });
    diff.hidden = true;  // kept: it is what the page says without this script
    diff.after(pair);
  }

  // The digest is what a phone reader came for; the abstract is one tap away.
  if (window.matchMedia("(max-width: 40rem)").matches) {
    var folds = document.querySelectorAll("details[data-fold-narrow]");
    for (var i = 0; i < folds.length; i++) folds[i].open = false;
  }
})();
