// The per-provider docs keep up with the protocol list (www/protocols/): docs/providers.md has a
// row and a section for each protocol, and docs/troubleshooting.md's speech-to-text errors each
// have a row per protocol. A protocol added without its docs fails here. (The recipes' code is
// executed by tests/e2e/recipes.test.mjs.)

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { loadDescriptors } from "../../www/devstack/protocols.mjs";

const REPO = new URL("../../", import.meta.url);
const read = (path) => readFileSync(new URL(path, REPO), "utf8");
const names = (await loadDescriptors()).map(({ name }) => name);

/** The text under each heading of `level` (`###`) in `text`, by heading. */
function sections(text, level) {
  const out = new Map();
  const parts = text.split(new RegExp(`^${level} `, "m")).slice(1);
  for (const part of parts) {
    const end = part.search(/^#{1,3} /m);
    const body = end < 0 ? part : part.slice(0, end);
    out.set(body.slice(0, body.indexOf("\n")), body);
  }
  return out;
}

test("docs/troubleshooting.md: each speech-to-text error has a row for every protocol, and CORS and autoplay have a section", () => {
  const text = read("docs/troubleshooting.md");
  const perProvider = text.slice(text.indexOf("## Speech-to-text, per provider"));
  assert.ok(perProvider.length > 0, "a speech-to-text section");
  const found = sections(perProvider, "###");
  for (const code of ["connect_failed", "unexpected_messages", "invalid_url", "dead_session"]) {
    const [heading, body] = [...found].find(([title]) => title.startsWith(`\`${code}\``)) ?? [];
    assert.ok(heading, `a section for ${code}`);
    const missing = names.filter((name) => !body.includes(`"${name}"`));
    assert.deepEqual(missing, [], `${code}: a row naming each protocol`);
  }
  for (const topic of ["CORS", "Autoplay"]) assert.ok([...found.keys()].some((title) => title.startsWith(topic)), `a section for ${topic}`);
});

test("docs/providers.md: every protocol in its table and with a section of its own", () => {
  const text = read("docs/providers.md");
  const table = text.slice(text.indexOf("| provider | `protocol` |"));
  for (const name of names) {
    assert.match(table, new RegExp(`\\| \`"${name}"\`( \\(default\\))? \\|`), `${name}: a row in the table`);
    assert.ok(text.includes(`<!-- executed: tests/e2e/recipes.test.mjs ${name}-backend -->`), `${name}: its route`);
    assert.ok(text.includes(`<!-- executed: tests/e2e/recipes.test.mjs ${name}-page -->`), `${name}: its page options`);
  }
});
