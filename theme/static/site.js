// What every script of the site shares: the site's root, fetching its files (gzipped ones
// inflated), the one search index over search/ that every page's scripts query, and
// writing to localStorage.
import { createIndex } from "./engine.js";
// The site's words for what scripts say (made by the build from theme/templates/ui.js).
import ui from "./ui.js";

// The site's root: this file is theme/site.js under it, on whatever page imports it.
export const root = new URL("../", import.meta.url).href;

// A file of the site as bytes. Index files, shards and vectors are stored gzipped (*.gz: a
// size-bound host counts stored bytes) and inflated here; a server that sent one decoded
// (Content-Encoding) has had the browser inflate it already.
export function fetchBytes(path) {
  return fetch(root + path).then(function (r) {
    if (!r.ok) throw new Error(path + ": HTTP " + r.status);
    return r.arrayBuffer();
  }).then(function (buf) {
    const b = new Uint8Array(buf);
    if (!/\.gz$/.test(path) || b[0] !== 0x1f || b[1] !== 0x8b) return buf;
    return new Response(new Blob([b]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
  });
}

export function fetchJSON(path) {
  return fetchBytes(path).then(function (buf) { return JSON.parse(new TextDecoder().decode(buf)); });
}

export function fetchText(path) {
  return fetchBytes(path).then(function (buf) { return new TextDecoder().decode(buf); });
}

export const index = createIndex(fetchJSON);

// Every localStorage write of the site's scripts goes through here. A browser refuses one
// when the site's storage is full (QuotaExceededError) or turned off: then false, and the
// reader is told at the top of the page, so the caller leaves things as they were (a
// shared link keeps its ?seed=) and nothing seems saved that was not.
export function store(key, text) {
  try {
    localStorage.setItem(key, text);
    return true;
  } catch {
    let note = document.getElementById("storage-full");
    if (!note) {
      note = document.createElement("p");
      note.id = "storage-full";
      note.className = "banner";
      note.setAttribute("role", "alert");
      (document.getElementById("main") || document.body).prepend(note);
    }
    note.textContent = ui.storage_full;
    return false;
  }
}
