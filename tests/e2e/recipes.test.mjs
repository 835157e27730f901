// docs/providers.md's recipes, one per speech-to-text protocol, executed as written: each
// provider's backend route (a block for the end of the README's server.mjs) and the page's two
// options (`transcriber: { protocol, provision }`, in place of Gladia's in the README's
// VoiceSession quick start).
//
// - Every protocol in www/protocols/ has a recipe, and Gladia's route is the README server's own.
// - No drift from the descriptors: each route, run in the README's server.mjs with its provider's
//   hosts pointed at the dev stack (through a recording proxy), sends the provider the same request
//   as its descriptor's `backend()` (method, path and query, headers, body) and answers the page
//   the same `{ url, protocols?, config? }`, the credentials the mock minted aside.
// - Each recipe works: the quick start with the recipe's options, in Chromium with the fake
//   microphone, through the README's server with every route, gets a final from that protocol's mock.

import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import { startDevStack } from "../../www/devstack.mjs";
import { loadDescriptors } from "../../www/devstack/protocols.mjs";
import { docBlock, startReadmeBackend } from "./doc_blocks.mjs";
import { openPage } from "./harness.mjs";
import { launchGestureChromium, loadPage } from "./readme_page.mjs";

// Literal calls: tests/docs/markdown.test.mjs checks that each block marked as executed is read here.
const RECIPES = {
  gladia: {
    backend: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "gladia-backend"),
    page: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "gladia-page"),
  },
  deepgram: {
    backend: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "deepgram-backend"),
    page: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "deepgram-page"),
  },
  "deepgram-flux": {
    backend: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "deepgram-flux-backend"),
    page: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "deepgram-flux-page"),
  },
  assemblyai: {
    backend: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "assemblyai-backend"),
    page: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "assemblyai-page"),
  },
  openai: {
    backend: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "openai-backend"),
    page: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "openai-page"),
  },
  speechmatics: {
    backend: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "speechmatics-backend"),
    page: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "speechmatics-page"),
  },
  soniox: {
    backend: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "soniox-backend"),
    page: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "soniox-page"),
  },
  elevenlabs: {
    backend: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "elevenlabs-backend"),
    page: docBlock("docs/providers.md", "tests/e2e/recipes.test.mjs", "elevenlabs-page"),
  },
};
const README_SERVER = docBlock("README.md", "tests/e2e/readme.test.mjs", "server");
const QUICK_START = docBlock("README.md", "tests/e2e/readme_voice.test.mjs", "voice-quick-start");
const BUTTONS = '<button id="talk">Talk</button> <button id="hang-up">Hang up</button>';

const descriptors = await loadDescriptors();
/** The environment prefix of a protocol's provider, as providers.md names it: deepgram-flux → DEEPGRAM. */
const prefixOf = (name) => name.split("-")[0].toUpperCase();
const keyOf = (name) => `key-of-${prefixOf(name).toLowerCase()}`;

/** The quick start with `page` (the recipe's lines) in place of its `transcriber: { … }` block. */
export function withPageOptions(quickStart, page) {
  const lines = quickStart.split("\n");
  const at = lines.findIndex((line) => /^\s*transcriber: \{$/.test(line));
  const end = lines.findIndex((line, index) => index > at && /^\s*\},$/.test(line));
  assert.ok(at > 0 && /^\s*protocol: "gladia",/.test(lines[at + 1]) && /^\s*provision: /.test(lines[at + 2]) && end === at + 3, "the quick start has Gladia's transcriber block: protocol and provision");
  const indent = /^\s*/.exec(lines[at])[0];
  const replacement = page.trimEnd().split("\n").map((line) => indent + line);
  return [...lines.slice(0, at), ...replacement, ...lines.slice(end + 1)].join("\n");
}

/**
 * An HTTP server that passes every request on to `target` and records it (`log`): method, path
 * with its query, headers (but the connection's own), body, and the answer.
 */
async function recordingProxy(target) {
  const log = [];
  const parse = (text) => {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  };
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks).toString();
    const { host, connection, "content-length": length, ...headers } = req.headers;
    const entry = { method: req.method, path: req.url, headers, body: parse(body) };
    log.push(entry);
    try {
      const answer = await fetch(new URL(req.url, target), { method: req.method, headers, body: body === "" ? undefined : body });
      const text = await answer.text();
      Object.assign(entry, { status: answer.status, answer: parse(text) });
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "text/plain" }).end(text);
    } catch {
      res.destroy();
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, log, close: () => new Promise((resolve) => server.close(resolve)) };
}

/**
 * `answer` with every string the provider answered (`upstream`) of 8 characters or more replaced
 * by its place there (`<$.access_token>`), as it is, JSON-escaped or URL-encoded: credentials are
 * new on each call, and what is left must be the same.
 */
export function withoutCredentials(answer, upstream) {
  const leaves = [];
  const walk = (value, path) => {
    if (typeof value === "string") leaves.push([value, path]);
    else if (value && typeof value === "object") for (const [key, inner] of Object.entries(value)) walk(inner, `${path}.${key}`);
  };
  walk(upstream, "$");
  let text = JSON.stringify(answer);
  for (const [value, path] of leaves.filter(([value]) => value.length >= 8).sort((a, b) => b[0].length - a[0].length)) {
    for (const form of new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)])) text = text.split(form).join(`<${path}>`);
  }
  return JSON.parse(text);
}

let stack;
let proxy;
let backend;
let wsOrigin;
before(async () => {
  stack = await startDevStack({ port: 0, upstream: null });
  proxy = await recordingProxy(stack.url);
  wsOrigin = new URL(stack.url).origin.replace(/^http/, "ws");
  // Every provider's hosts: its API through the recording proxy, its socket at the dev stack.
  const env = {};
  for (const { name } of descriptors) {
    const prefix = prefixOf(name);
    Object.assign(env, { [`${prefix}_API_URL`]: proxy.url, [`${prefix}_WS_URL`]: wsOrigin, [`${prefix}_API_KEY`]: keyOf(name) });
  }
  // The README's server.mjs with every other provider's route added at its end, as providers.md says.
  const others = Object.entries(RECIPES).filter(([name]) => name !== "gladia").map(([, recipe]) => recipe.backend);
  backend = await startReadmeBackend(stack.url, [README_SERVER, ...others].join("\n"), { env });
});
after(async () => {
  await backend?.close();
  await proxy?.close();
  await stack?.close();
});

test("docs/providers.md has a recipe for every protocol in www/protocols/, and Gladia's route is the README server's", () => {
  assert.deepEqual(Object.keys(RECIPES).sort(), descriptors.map(({ name }) => name).sort());
  assert.ok(README_SERVER.endsWith(RECIPES.gladia.backend), "the README's server.mjs ends with Gladia's route as providers.md shows it");
  const code = (text) => text.replace(/ *\/\/.*$/gm, "").split("\n").filter((line) => line.trim() !== "");
  assert.deepEqual(code(withPageOptions(QUICK_START, RECIPES.gladia.page)), code(QUICK_START), "Gladia's page options are the quick start's own");
  for (const [name, { backend: route, page }] of Object.entries(RECIPES)) {
    assert.match(route, new RegExp(`^STT\\.set\\("/api/stt/${name}", `, "m"), `${name}: its route is POST /api/stt/${name}`);
    assert.match(page, new RegExp(`^transcriber: \\{\n  protocol: "${name}",\n  provision: `, "m"), `${name}: the page names its protocol beside its provision`);
    assert.match(page, new RegExp(`post\\("/api/stt/${name}", `), `${name}: the page asks its route`);
  }
});

/** What the README's server answers on the recipe's route, and the provider request it made. */
async function viaRecipe(name) {
  proxy.log.length = 0;
  const response = await fetch(`${backend.url}/api/stt/${name}`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"reason":"start"}' });
  assert.equal(response.status, 200, `${name}: the route answers`);
  return { answer: await response.json(), requests: proxy.log.splice(0) };
}

/** What the descriptor's backend() answers, against the same mock, and the provider request it made. */
async function viaDescriptor(descriptor) {
  proxy.log.length = 0;
  const call = async (url, init) => {
    const response = await fetch(url, init);
    if (!response.ok) throw Object.assign(new Error(`${url} answered ${response.status}`), { status: response.status });
    return response.json();
  };
  const answer = await descriptor.backend({ api: proxy.url, socket: wsOrigin, key: keyOf(descriptor.name), call });
  return { answer, requests: proxy.log.splice(0) };
}

const sent = ({ method, path, headers, body }) => ({ method, path, headers, body });

describe("each recipe's route does what its descriptor's backend() does", () => {
  for (const descriptor of descriptors) {
    test(descriptor.name, async () => {
      const recipe = await viaRecipe(descriptor.name);
      const reference = await viaDescriptor(descriptor);
      assert.equal(recipe.requests.length, 1, "one call to the provider");
      assert.equal(reference.requests.length, 1);
      assert.deepEqual(sent(recipe.requests[0]), sent(reference.requests[0]), "the same request to the provider");
      assert.ok(recipe.requests[0].status < 300, "the mock took it");
      const [mine, theirs] = [recipe, reference].map(({ answer, requests }) => withoutCredentials(answer, requests[0].answer));
      assert.deepEqual(mine, theirs, "the same answer to the page");
      assert.ok(JSON.stringify(mine).includes("<$."), "the answer carries what the provider minted");
    });
  }

  test("the comparison tells two protocols apart (Deepgram's route against Flux's descriptor)", async () => {
    const recipe = await viaRecipe("deepgram");
    const flux = await viaDescriptor(descriptors.find(({ name }) => name === "deepgram-flux"));
    assert.notDeepEqual(withoutCredentials(recipe.answer, recipe.requests[0].answer), withoutCredentials(flux.answer, flux.requests[0].answer));
  });
});

describe("each recipe, route and page, in Chromium: the microphone's audio comes back as a final from the protocol's mock", () => {
  let browser;
  before(async () => {
    browser = await launchGestureChromium();
  });
  after(async () => {
    await browser?.close();
  });

  for (const descriptor of descriptors) {
    const { name } = descriptor;
    test(name, async () => {
      const code = backend.address(withPageOptions(QUICK_START, RECIPES[name].page));
      const { page, console, errors } = await openPage(browser);
      const logs = () => console.filter((line) => line.type === "log").map((line) => line.text);
      const until = async (predicate, label) => {
        for (let i = 0; !predicate(logs()); i += 1) {
          if (i > 400) throw new Error(`${name}: timed out waiting for ${label}\nconsole: ${JSON.stringify(console.slice(-40))}\nerrors: ${JSON.stringify(errors)}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      };
      stack.reset();
      try {
        await loadPage(page, console, stack.url, code, { body: BUTTONS });
        await page.click("#talk");
        await until((lines) => lines.some((line) => /^you: \S/.test(line)), "a final");
        const stats = await (await fetch(new URL("/__stats", stack.url))).json();
        const keys = Object.values(stats[name].keys);
        const used = keys.filter((key) => key.connections > 0);
        assert.ok(used.length > 0, `through the ${name} mock`);
        for (const key of used) {
          assert.equal(key.refused, 0, "no connect refused: the credential and the subprotocols are right");
          assert.equal(key.invalidMessages, 0, "nothing the protocol does not know");
        }
        assert.ok(used.some((key) => key.finals > 0), "the mock made the final");
        const auth = descriptor.fixture?.authCounter;
        if (auth) assert.ok(keys.some((key) => key[auth] > 0), `the mock checked the credential (${auth})`);
        await page.click("#hang-up");
        await until((lines) => lines.at(-1) === "state: stopped", "the session to stop");
        assert.deepEqual(console.filter((line) => line.type === "warning" && /code|protocol|not allowed/i.test(line.text)).map((line) => line.text), [], "no warning (onError logs the error's code as one)");
        assert.deepEqual(errors, []);
      } finally {
        await page.close();
      }
    });
  }
});
