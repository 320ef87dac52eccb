// Vite needs nothing for the package: its build sees `new URL("toolbridge_host_bg.wasm",
// import.meta.url)` in the package's module, copies the .wasm into assets/ under a hashed name and
// rewrites the URL (and its dev server points the same URL at the package's own copy).
import { defineConfig } from "vite";

export default defineConfig({
  build: { outDir: "dist/vite", emptyOutDir: true },
});
