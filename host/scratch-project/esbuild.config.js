// esbuild neither copies the .wasm nor rewrites the package's `new URL(…, import.meta.url)`, so
// this build's entry (src/main-esbuild.js) imports the .wasm through esbuild's file loader, which
// copies it under a hashed name and gives its URL (the step the package's README gives). esbuild
// writes no HTML: index.html is written here with the bundle's tag in place of the one Vite reads
// (as webpack.config.js does).
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

/** The tag of index.html that Vite builds from; this build puts its own bundle there. */
const SOURCE_TAG = '<script type="module" src="/src/main.js"></script>';
const OUT = "dist/esbuild";

rmSync(OUT, { recursive: true, force: true });
const result = await build({
  entryPoints: ["src/main-esbuild.js"],
  bundle: true,
  format: "esm",
  minify: true,
  outdir: `${OUT}/assets`,
  entryNames: "[name]-[hash]",
  assetNames: "[name]-[hash]",
  loader: { ".wasm": "file" },
  publicPath: "/assets",
  metafile: true,
  logLevel: "info",
});
const page = readFileSync("index.html", "utf8");
if (!page.includes(SOURCE_TAG)) throw new Error(`index.html has no ${SOURCE_TAG}`);
const [bundle] = Object.entries(result.metafile.outputs)
  .filter(([file, output]) => file.endsWith(".js") && output.entryPoint)
  .map(([file]) => file.slice(OUT.length));
writeFileSync(`${OUT}/index.html`, page.replace(SOURCE_TAG, `<script type="module" src="${bundle}"></script>`));
