// Static file serving for the dev stack: the repo root (so /pkg/ and /www/
// are both reachable), `/` as www/index.html, never anything outside root.

import { createReadStream } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import path from "node:path";

export const MIME_TYPES = Object.freeze({
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  // Served as text so a browser shows .ts/.d.ts instead of downloading them.
  ".ts": "text/plain; charset=utf-8",
  ".wasm": "application/wasm",
  ".wav": "audio/wav",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/plain; charset=utf-8",
});

const INDEX_PATH = "/www/index.html";

function sendText(res, status, text, extra = {}) {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...extra });
  res.end(`${text}\n`);
}

/**
 * Maps a raw request path to a path below `root`, or returns an HTTP status
 * for why it cannot. The check runs on the *decoded* path so `%2e%2e%2f`
 * tricks fail the same way as a literal `../`.
 */
export function resolveStaticPath(root, rawPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(rawPath === "/" ? INDEX_PATH : rawPath);
  } catch {
    return { status: 400 };
  }
  if (decoded.includes("\0") || decoded.includes("\\")) return { status: 400 };
  const segments = decoded.split("/");
  if (segments.includes("..")) return { status: 403 };
  // Dot-files (.git, .cargo, ...) are never part of the demo.
  if (segments.some((segment) => segment.startsWith("."))) return { status: 404 };
  const file = path.resolve(root, `.${decoded}`);
  if (file !== root && !file.startsWith(root + path.sep)) return { status: 403 };
  return { file, trailingSlash: decoded.endsWith("/") };
}

/** Serves one GET/HEAD request from `root` (an absolute, real path). */
export async function serveStatic(req, res, root, rawPath) {
  if (req.method !== "GET" && req.method !== "HEAD") {
    sendText(res, 405, "method not allowed", { allow: "GET, HEAD" });
    return;
  }
  const resolved = resolveStaticPath(root, rawPath);
  if (resolved.status) {
    sendText(res, resolved.status, resolved.status === 403 ? "forbidden" : resolved.status === 404 ? "not found" : "bad request");
    return;
  }
  let file = resolved.file;
  let info;
  try {
    info = await stat(file);
    if (info.isDirectory()) {
      // Relative URLs inside index.html need the trailing slash. One leading
      // slash only: "//host/" would be an open redirect.
      if (!resolved.trailingSlash) {
        res.writeHead(301, { location: `/${rawPath.replace(/^\/+/, "")}/`, "cache-control": "no-store" });
        res.end();
        return;
      }
      file = path.join(file, "index.html");
      info = await stat(file);
    }
    // A symlink inside root must not lead outside it.
    const real = await realpath(file);
    if (!real.startsWith(root + path.sep)) {
      sendText(res, 403, "forbidden");
      return;
    }
  } catch {
    sendText(res, 404, "not found");
    return;
  }
  if (!info.isFile()) {
    sendText(res, 404, "not found");
    return;
  }
  res.writeHead(200, {
    "content-type": MIME_TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream",
    "content-length": info.size,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    // Pages of other origins (the wasm test runner's) import the protocol descriptors as modules.
    "access-control-allow-origin": "*",
  });
  if (req.method === "HEAD") {
    res.end();
    return;
  }
  const stream = createReadStream(file);
  stream.on("error", () => res.destroy());
  res.on("close", () => stream.destroy());
  stream.pipe(res);
}
