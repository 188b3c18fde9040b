// What every script of the site shares: the site's root, fetching its files (gzipped ones
// inflated), and the one search index over search/ that every page's scripts query.
import { createIndex } from "./engine.js";

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
