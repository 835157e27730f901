// The Markdown checks the docs' tests share (tests/docs/markdown.test.mjs over the repository,
// tests/consumers/shipped_docs.test.mjs over the packed tarball): markdown-it, CommonMark plus
// GitHub's tables; tables that render as a paragraph, relative links and images to files that do
// not exist or to anchors their target lacks, and blocks marked as executed that no test reads.

import { dirname, join } from "node:path";
import MarkdownIt from "markdown-it";

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
 * `executed: false` leaves out the checks of executed blocks (for a copy without the tests, such
 * as the packed tarball's).
 */
export function problemsOf(path, text, { read, exists, executed = true }) {
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
    if (executed && token.type === "html_block" && token.content.startsWith("<!-- executed:")) {
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
    if (executed && token.type === "inline" && CLAIMS_EXECUTED.test(token.content)) {
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
