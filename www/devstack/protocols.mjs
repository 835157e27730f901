// Every speech-to-text protocol the dev stack speaks, found by listing www/protocols/: each
// descriptor (www/protocols/<name>.mjs) with its mock (www/devstack/mocks/<name>.mjs) on the one
// socket skeleton (ws_mock.mjs). A new protocol is those two files; nothing here names one.
//
// Besides each mock's token endpoint and socket, the dev stack serves per protocol
//   POST /api/stt/<name>   { reason, key?, socket?, token? } -> { url, protocols?, config? }
// which stands in for an app's backend: it runs the descriptor's backend recipe in Node, with the
// dev stack's own key (never sent to a page) against the mock, through `call(url, init)` (fetch that
// resolves with the JSON answer or rejects with the HTTP status), and adds the mock switches the
// page asked for: `token` ones to the token request, `socket` ones to the socket URL, `key` as
// `mock_key` to both. A token endpoint's HTTP error is passed on with its status; a network error
// (no status) is passed on as one: the page's connection is destroyed.
// And GET /__protocols lists the descriptors as JSON (the demo page and the browser suite read it).

import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { HttpError, readJson, sendJson } from "./http.mjs";
import { createWsMock, credentialStore, pathMatcher } from "./ws_mock.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const PROTOCOLS_DIR = path.resolve(HERE, "../protocols");
const MOCKS_DIR = path.join(HERE, "mocks");
const BACKEND_PATH = /^\/api\/stt\/([a-z0-9-]+)$/;
/** The key the dev stack's backend route sends to its own mocks; any value passes there. */
const DEV_BACKEND_KEY = "dev-backend-key";

/**
 * The demo's failure switches every protocol has, the socket skeleton's own (ws_mock.mjs): each
 * descriptor lists only the switches of its own protocol besides these.
 */
export const SHARED_FAILURES = Object.freeze([
  { id: "drop", label: "drops (1006)", socket: "mock_drop_after_ms=1500&mock_times=2" },
  { id: "upgradeRefused", label: "upgrade refused (404: a dead URL)", socket: "mock_refuse_upgrade=404" },
  { id: "provision429", label: "credentials 429 (twice)", token: "mock_provision=429&mock_times=2" },
]);

/** The demo's failure switches of `descriptor`: the shared ones, then its own. */
export const demoFailures = (descriptor) => [...SHARED_FAILURES, ...descriptor.failures];

/** Every descriptor in www/protocols/, by name. */
export async function loadDescriptors(dir = PROTOCOLS_DIR) {
  const files = readdirSync(dir).filter((file) => file.endsWith(".mjs")).sort();
  const descriptors = [];
  for (const file of files) {
    const { default: descriptor } = await import(pathToFileURL(path.join(dir, file)).href);
    if (descriptor?.name !== file.slice(0, -".mjs".length)) throw new Error(`www/protocols/${file} must export a descriptor named "${file.slice(0, -4)}"`);
    descriptors.push(descriptor);
  }
  return descriptors;
}

/** Each descriptor with its mock, mounted for the dev stack `ctx`. */
export async function mountProtocols(ctx) {
  const descriptors = await loadDescriptors();
  const mounted = [];
  // Protocols of one provider may share its token endpoint (and so its credentials).
  const stores = new Map();
  for (const descriptor of descriptors) {
    const { default: mockSpec } = await import(pathToFileURL(path.join(MOCKS_DIR, `${descriptor.name}.mjs`)).href);
    if (!stores.has(descriptor.mock.http)) stores.set(descriptor.mock.http, credentialStore());
    const spec = {
      name: descriptor.name,
      matchHttp: pathMatcher(descriptor.mock.http),
      matchSocket: pathMatcher(descriptor.mock.socket),
      ...mockSpec,
    };
    const mock = createWsMock(ctx, spec, { credentials: stores.get(descriptor.mock.http) });
    mounted.push({ name: descriptor.name, descriptor, mock });
  }
  return mounted;
}

/** What GET /__protocols answers: each descriptor's data (its functions by name only). */
export function protocolList(mounted) {
  return mounted.map(({ name, descriptor }) => ({
    name,
    label: descriptor.label,
    default: descriptor.default === true,
    module: `/www/protocols/${name}.mjs`,
    backend: `/api/stt/${name}`,
    mock: descriptor.mock,
    failures: demoFailures(descriptor),
    fixture: { ...descriptor.fixture, scenarios: Object.keys(descriptor.fixture?.scenarios ?? {}) },
  }));
}

/** What /__stats lists under `services` for each protocol. */
export function protocolServices(mounted) {
  return Object.fromEntries(
    mounted.map(({ name, descriptor }) => [name, { path: descriptor.mock.http, socket: descriptor.mock.socket, shown: descriptor.mock.shown, backend: `/api/stt/${name}`, failures: demoFailures(descriptor).map((f) => f.id) }]),
  );
}

export const matchBackendPath = (pathname) => BACKEND_PATH.exec(pathname)?.[1] ?? null;

/** `url` with `switches` added to its query. */
function withSwitches(url, switches) {
  if ([...switches.keys()].length === 0) return url;
  const out = new URL(url);
  for (const [name, value] of switches) out.searchParams.set(name, value);
  return out.href;
}

/** POST /api/stt/<name>: the app's backend, as the descriptor's recipe has it. */
export async function handleBackend(ctx, mounted, name, req, res) {
  const entry = mounted.find((protocol) => protocol.name === name);
  if (!entry) return sendJson(req, res, 404, { error: `no protocol "${name}"; one of ${mounted.map((p) => p.name).join(", ")}` });
  if (req.method !== "POST") return sendJson(req, res, 405, { error: "use POST" });
  let body;
  try {
    body = await readJson(req);
  } catch (error) {
    if (error instanceof HttpError) sendJson(req, res, error.status, { error: error.message });
    return undefined;
  }
  const token = new URLSearchParams(typeof body.token === "string" ? body.token : "");
  // Which protocol asks, for a token endpoint that several share (their counters are apart).
  token.set("mock_protocol", name);
  const socket = new URLSearchParams(typeof body.socket === "string" ? body.socket : "");
  if (typeof body.key === "string" && body.key) {
    token.set("mock_key", body.key);
    socket.set("mock_key", body.key);
  }
  // The page gave up (its provision() signal aborted), or the dev stack closes: so does the backend.
  const gone = new AbortController();
  res.on("close", () => res.writableEnded || gone.abort());
  const origin = `http://${ctx.authority()}`;
  try {
    const answer = await entry.descriptor.backend({
      api: origin,
      socket: origin.replace(/^http/, "ws"),
      key: DEV_BACKEND_KEY,
      reason: body.reason,
      call: async (url, init) => {
        const response = await fetch(withSwitches(url, token), { ...init, signal: AbortSignal.any([gone.signal, ctx.signal]) });
        if (!response.ok) throw Object.assign(new Error(`${entry.name} answered ${response.status}`), { status: response.status });
        return response.json();
      },
    });
    return sendJson(req, res, 200, { ...answer, url: withSwitches(answer.url, socket) });
  } catch (error) {
    if (Number.isInteger(error?.status)) return sendJson(req, res, error.status, { error: error.message });
    // No status: a network error at the token endpoint (or the page left). The page sees one too.
    req.socket.destroy();
    return undefined;
  }
}

/**
 * The mock whose path `pathname` is (`match` says which), for `kind` "Http" or "Socket": where
 * several protocols share a path, the one `mock_protocol` names, else the first.
 */
export function mockFor(mounted, kind, pathname, url) {
  const matches = mounted.map((protocol) => ({ protocol, match: protocol.mock[`match${kind}`](pathname) })).filter(({ match }) => match);
  return matches.find(({ protocol }) => protocol.name === url.searchParams.get("mock_protocol")) ?? matches[0] ?? null;
}
