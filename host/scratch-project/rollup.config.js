// Rollup leaves the package's `new URL("toolbridge_host_bg.wasm", import.meta.url)` as it is, so
// @web/rollup-plugin-import-meta-assets (the step the package's README gives) emits the .wasm
// under a hashed name and rewrites the URL; @rollup/plugin-node-resolve finds the package in
// node_modules. The last plugin is this page's own: index.html written with the bundle's tag in
// place of the one Vite reads (as webpack.config.js does).
import { readFileSync } from "node:fs";
import { nodeResolve } from "@rollup/plugin-node-resolve";
import { importMetaAssets } from "@web/rollup-plugin-import-meta-assets";

/** The tag of index.html that Vite builds from; this build puts its own bundle there. */
const SOURCE_TAG = '<script type="module" src="/src/main.js"></script>';

function entryPage() {
  return {
    name: "entry-page",
    generateBundle(_options, bundle) {
      const page = readFileSync(new URL("index.html", import.meta.url), "utf8");
      if (!page.includes(SOURCE_TAG)) this.error(`index.html has no ${SOURCE_TAG}`);
      const entry = Object.values(bundle).find((chunk) => chunk.type === "chunk" && chunk.isEntry);
      const tag = `<script type="module" src="/${entry.fileName}"></script>`;
      this.emitFile({ type: "asset", fileName: "index.html", source: page.replace(SOURCE_TAG, tag) });
    },
  };
}

export default {
  input: "src/main.js",
  output: {
    dir: "dist/rollup",
    format: "es",
    entryFileNames: "assets/[name]-[hash].js",
    chunkFileNames: "assets/[name]-[hash].js",
    assetFileNames: "assets/[name]-[hash][extname]",
  },
  plugins: [nodeResolve({ browser: true }), importMetaAssets(), entryPage()],
};
