// The docs render as written: every Markdown file of the repository (README, CONTRIBUTING, docs/,
// www/, examples/) is parsed with markdown-it, CommonMark plus GitHub's tables, and fails on
//  - table rows that render as a paragraph (a table split by a blank line, a missing delimiter row);
//  - a relative link or image to a file that does not exist, or to an anchor its target lacks;
//  - a code block marked `<!-- executed: <test file> <id> -->` whose test does not read it with
//    `docBlock(file, testFile, id)`, and prose saying a block is executed with no such marker.

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import MarkdownIt from "markdown-it";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const md = new MarkdownIt({ html: true });

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens, -1, -2 for repeats. */
function slugger() {
  const seen = new Map();
  return (text) => {
    const base = text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "").replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return count ? `${base}-${count}` : base;
  };
}

const plainText = (inline) => (inline.children ?? []).filter((t) => t.type === "text" || t.type === "code_inline").map((t) => t.content).join("");

/** The anchors a Markdown text defines: its headings' and every `id="…"`/`name="…"` in its HTML. */
export function anchorsOf(text) {
  const tokens = md.parse(text, {});
  const slug = slugger();
  const anchors = new Set();
  tokens.forEach((token, i) => {
    if (token.type === "heading_open") anchors.add(slug(plainText(tokens[i + 1])));
    const html = token.type === "html_block" ? [token.content] : (token.children ?? []).filter((t) => t.type === "html_inline").map((t) => t.content);
    for (const chunk of html) for (const [, id] of chunk.matchAll(/\b(?:id|name)="([^"]+)"/g)) anchors.add(id);
  });
  return anchors;
}

const EXECUTED = /^<!-- executed: (\S+) (\S+) -->\s*$/;
const CLAIMS_EXECUTED = /\b(?:runs|executes) this block\b|\bblock is executed\b/i;

/**
 * The problems of one Markdown file, each `path:line: what`. `read(path)` reads another file of
 * the repository (for anchors and executing tests); `exists(path)` says whether a path exists.
 */
export function problemsOf(path, text, { read, exists }) {
  const problems = [];
  const at = (token) => `${path}:${(token.map?.[0] ?? 0) + 1}`;
  const tokens = md.parse(text, {});
  let markedFence = -1;
  tokens.forEach((token, i) => {
    // Table rows that did not become a table.
    if (token.type === "inline" && tokens[i - 1]?.type === "paragraph_open") {
      const rows = token.content.split("\n").filter((line) => /^\s*\|.*\|\s*$/.test(line));
      if (rows.length) problems.push(`${at(token)}: ${rows.length} table row(s) render as a paragraph (a table split by a blank line?): ${rows[0].slice(0, 60)}`);
    }
    // Executed code blocks.
    if (token.type === "html_block" && token.content.startsWith("<!-- executed:")) {
      const marker = EXECUTED.exec(token.content.trim());
      const fence = tokens[i + 1];
      if (!marker) problems.push(`${at(token)}: malformed marker, expected <!-- executed: <test file> <id> -->`);
      else if (fence?.type !== "fence") problems.push(`${at(token)}: the "${marker[2]}" marker is not followed by a code block`);
      else {
        markedFence = i + 1;
        const [, testFile, id] = marker;
        const source = exists(testFile) ? read(testFile) : null;
        const reads = source && [...source.matchAll(/docBlock\(\s*"([^"]+)",\s*"([^"]+)",\s*"([^"]+)"\s*\)/g)].some(([, file, tf, blockId]) => file === path && tf === testFile && blockId === id);
        if (!source) problems.push(`${at(token)}: block "${id}" is marked as executed by ${testFile}, which does not exist`);
        else if (!reads) problems.push(`${at(token)}: block "${id}" is marked as executed by ${testFile}, which never reads it (docBlock("${path}", "${testFile}", "${id}"))`);
      }
    }
    if (token.type === "inline" && CLAIMS_EXECUTED.test(token.content)) {
      const previousFence = tokens.slice(0, i).findLastIndex((t) => t.type === "fence");
      if (previousFence < 0 || previousFence !== markedFence) problems.push(`${at(token)}: says a block is executed, but the code block before it has no <!-- executed: … --> marker`);
    }
    // Relative links and images.
    for (const child of token.children ?? []) {
      const target = child.type === "link_open" ? child.attrGet("href") : child.type === "image" ? child.attrGet("src") : null;
      if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [file, fragment] = target.split("#");
      const targetPath = file ? join(dirname(path), decodeURIComponent(file)) : path;
      if (file && !exists(targetPath)) {
        problems.push(`${at(token)}: dead link ${target}`);
      } else if (fragment !== undefined && targetPath.endsWith(".md") && !anchorsOf(targetPath === path ? text : read(targetPath)).has(fragment)) {
        problems.push(`${at(token)}: ${target}: no anchor "${fragment}" in ${targetPath}`);
      }
    }
  });
  return problems;
}

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
