// Node (SSR, test runners, scripts): `import` + `init()` with no argument + one turn, and proof
// that loading the package touches none of the browser's globals. Prints one JSON line.
import { oneTurn } from "./turn.js";

const touched = [];
for (const name of ["window", "navigator", "document", "self", "location"]) {
  Object.defineProperty(globalThis, name, {
    configurable: true,
    get() {
      touched.push(name);
      return undefined;
    },
  });
}
// Both entries: what Node resolves ("node" condition) and the web entry a bundler's SSR pass may load.
const turnguard = await import("turnguard");
await import("./node_modules/turnguard/turnguard.js");
const touchedAtImport = [...touched];
for (const name of ["window", "navigator", "document", "self", "location"]) delete globalThis[name];

await turnguard.default();
const result = await oneTurn(turnguard, process.argv[2]);
console.log(JSON.stringify({ touchedAtImport, ...result }));
