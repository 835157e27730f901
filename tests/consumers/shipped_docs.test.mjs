// The docs ship whole: every Markdown file in the packed tarball (`npm pack ./pkg --dry-run`'s
// file list, read from pkg/) renders its tables and links only to files in the tarball, at anchors
// they have, or to absolute URLs. The manifest a user installs is not private. Fast: no install.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { posix } from "node:path";
import { test } from "node:test";
import { problemsOf } from "../docs/markdown.mjs";
import { dryRunFiles, REPO } from "./support.mjs";

const built = existsSync(`${REPO}pkg/package.json`);
const skip = built ? false : "pkg/ is not built: run `npm run build` first";

/** The problems of the shipped Markdown files, checked against `files` (the tarball's list); `read(path)` reads the tarball's copy. */
function shippedProblems(files, read) {
  const shipped = new Set(files);
  const exists = (path) => {
    const normal = posix.normalize(path).replace(/\/$/, "");
    return shipped.has(normal) || files.some((file) => file.startsWith(`${normal}/`));
  };
  return files.filter((file) => file.endsWith(".md")).flatMap((path) => problemsOf(path, read(path), { read, exists, executed: false }));
}

test("every link in a Markdown file of the tarball resolves inside the tarball", { skip }, async (t) => {
  const files = await dryRunFiles();
  const markdown = files.filter((file) => file.endsWith(".md"));
  for (const must of ["README.md", "docs/api.md", "docs/providers.md", "docs/troubleshooting.md"]) assert.ok(markdown.includes(must), `${must} is shipped`);
  t.diagnostic(`checked: ${markdown.join(", ")}`);
  assert.deepEqual(shippedProblems(files, (path) => readFileSync(`${REPO}pkg/${path}`, "utf8")), []);
});

test("the check catches a link to a file the tarball lacks, and reads the tarball's copies", () => {
  const text = {
    "README.md": "[api](docs/api.md#title) [examples](examples/react/README.md) [contributing](CONTRIBUTING.md) [web](https://example.com/)\n\n<!-- executed: tests/e2e/x.test.mjs block -->\n```js\nrun();\n```\n",
    "docs/api.md": "# Title\n\n[perf](maintainers/performance.md) [readme](../README.md#nowhere)\n",
    "examples/react/README.md": "[setup](../../docs/api.md)\n",
  };
  const problems = shippedProblems(Object.keys(text), (path) => text[path]);
  assert.deepEqual(problems, [
    "README.md:1: dead link CONTRIBUTING.md",
    "docs/api.md:3: dead link maintainers/performance.md",
    'docs/api.md:3: ../README.md#nowhere: no anchor "nowhere" in README.md',
  ]);
});

test("the published manifest is not private, and the repository's is", { skip }, () => {
  const published = JSON.parse(readFileSync(`${REPO}pkg/package.json`, "utf8"));
  assert.equal(published.private, undefined, "pkg/package.json can be published");
  assert.equal(published.name, "turnguard");
  const root = JSON.parse(readFileSync(`${REPO}package.json`, "utf8"));
  assert.equal(root.private, true, "the repository's own manifest builds the package and is not one");
  assert.match(readFileSync(`${REPO}README.md`, "utf8"), /npm pack \.\/pkg/, "the README says how to install from a clone");
});
