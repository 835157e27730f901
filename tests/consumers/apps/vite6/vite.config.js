// What the README tells Vite 6 users to set.
export default {
  // Pre-bundling moves the glue away from its wasm file; serve the package as it ships.
  optimizeDeps: { exclude: ["turnguard"] },
  // Top-level `await init()` needs ES2022; Vite 6's default browser targets predate it.
  build: { target: "es2022" },
};
