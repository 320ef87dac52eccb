// The page's entry for Vite, webpack 5 and Rollup, which find the host module's .wasm by the
// package's own `new URL(…, import.meta.url)` and copy it into their output.
import { run } from "./page.js";

run();
