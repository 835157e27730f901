// The docs render as written: every Markdown file of the repository (README, CONTRIBUTING, docs/,
// www/, examples/) is parsed with markdown-it, CommonMark plus GitHub's tables, and fails on
//  - table rows that render as a paragraph (a table split by a blank line, a missing delimiter row);
//  - a relative link or image to a file that does not exist, or to an anchor its target lacks;
//  - a code block marked `<!-- executed: <test file> <id> -->` whose test does not read it with
//    `docBlock(file, testFile, id)`, and prose saying a block is executed with no such marker.

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { problemsOf } from "./markdown.mjs";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

function markdownFiles(dir = REPO) {
  const skip = new Set(["node_modules", "target", "pkg", ".git", ".venv"]);
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (skip.has(name)) return [];
    if (statSync(full).isDirectory()) return markdownFiles(full);
    return name.endsWith(".md") ? [relative(REPO, full)] : [];
  });
}

const repoFiles = {
  read: (path) => readFileSync(resolve(REPO, path), "utf8"),
  exists: (path) => existsSync(resolve(REPO, path)),
};

test("every Markdown file renders its tables, links only to what exists, and runs what it says it runs", () => {
  const files = markdownFiles();
  for (const must of ["README.md", "CONTRIBUTING.md", "docs/api.md", "docs/semantics.md", "docs/troubleshooting.md"]) {
    assert.ok(files.includes(must), `${must} is checked`);
  }
  const problems = files.flatMap((path) => problemsOf(path, repoFiles.read(path), repoFiles));
  assert.deepEqual(problems, []);
});

test("the README marks its executed blocks, and their tests read them", () => {
  const text = repoFiles.read("README.md");
  const markers = [...text.matchAll(/<!-- executed: (\S+) (\S+) -->/g)].map(([, file, id]) => `${file} ${id}`);
  assert.deepEqual(markers, ["tests/e2e/readme.test.mjs server", "tests/e2e/readme.test.mjs quick-start", "tests/e2e/readme_voice.test.mjs voice-quick-start"]);
});

// The checks themselves, on small texts: each must catch what it is for.
const fixture = (files) => ({ read: (path) => files[path], exists: (path) => path in files });

test("a table split by a blank line is caught", () => {
  const text = "| a | b |\n| --- | --- |\n| 1 | 2 |\n\n| 3 | 4 |\n";
  assert.match(problemsOf("x.md", text, fixture({}))[0], /^x\.md:5: 1 table row\(s\) render as a paragraph/);
  assert.deepEqual(problemsOf("x.md", "| a | b |\n| --- | --- |\n| 1 | 2 |\n| 3 | 4 |\n", fixture({})), []);
});

test("dead relative links, missing anchors and missing images are caught", () => {
  const files = { "docs/a.md": "# Title\n\n<a id=\"t4\"></a>**T4**\n", "docs/pic.png": "" };
  const text = "[ok](docs/a.md#title) [id](docs/a.md#t4) ![pic](docs/pic.png) [web](https://example.com/x) [self](#here)\n\n## Here\n";
  assert.deepEqual(problemsOf("r.md", text, fixture(files)), []);
  const bad = "[gone](docs/b.md) [anchor](docs/a.md#t5) ![pic](docs/nope.png) [self](#there)\n";
  assert.deepEqual(problemsOf("r.md", bad, fixture(files)), [
    "r.md:1: dead link docs/b.md",
    'r.md:1: docs/a.md#t5: no anchor "t5" in docs/a.md',
    "r.md:1: dead link docs/nope.png",
    'r.md:1: #there: no anchor "there" in r.md',
  ]);
});

test("a block marked as executed that its test never reads, or a claim without a marker, is caught", () => {
  const readsIt = 'const code = docBlock("r.md", "t.test.mjs", "quick");\n';
  const marked = "<!-- executed: t.test.mjs quick -->\n```js\nrun();\n```\n\n`npm test` runs this block.\n";
  assert.deepEqual(problemsOf("r.md", marked, fixture({ "t.test.mjs": readsIt })), []);
  assert.match(problemsOf("r.md", marked, fixture({ "t.test.mjs": "// reads nothing\n" }))[0], /block "quick" is marked as executed by t\.test\.mjs, which never reads it/);
  assert.match(problemsOf("r.md", marked, fixture({}))[0], /which does not exist/);
  const unmarked = "```js\nrun();\n```\n\nThis block is executed by `npm test`.\n";
  assert.match(problemsOf("r.md", unmarked, fixture({}))[0], /^r\.md:5: says a block is executed/);
});
