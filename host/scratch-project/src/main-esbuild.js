// The page's entry for esbuild, which neither copies the .wasm nor rewrites the package's
// `new URL(…, import.meta.url)`: its file loader copies the .wasm imported here into the output
// and gives its URL, which the page hands to `init`.
import wasm from "@toolbridge/host/toolbridge_host_bg.wasm";
import { run } from "./page.js";

run({ module_or_path: wasm });
