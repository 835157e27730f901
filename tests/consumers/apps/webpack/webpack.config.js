// A plain webpack 5 setup: top-level await and `new URL("…wasm", import.meta.url)` assets are on
// by default; nothing turnguard-specific is needed.
import { fileURLToPath } from "node:url";

export default {
  mode: "production",
  entry: "./src/index.js",
  output: { path: fileURLToPath(new URL("dist/", import.meta.url)), filename: "main.js", clean: true },
};
