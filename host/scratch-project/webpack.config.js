// webpack 5 needs nothing for the package either: it turns `new URL("toolbridge_host_bg.wasm",
// import.meta.url)` into an asset module, emits the .wasm under `assetModuleFilename` and
// rewrites the URL. The rest is this page's own: one bundle, and index.html written with that
// bundle's tag in place of the one Vite reads (what html-webpack-plugin would do, in a few lines).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The tag of index.html that Vite builds from; this build puts its own bundle there. */
const SOURCE_TAG = '<script type="module" src="/src/main.js"></script>';

class EntryPage {
  apply(compiler) {
    const { Compilation, sources } = compiler.webpack;
    compiler.hooks.thisCompilation.tap("EntryPage", (compilation) => {
      const stage = Compilation.PROCESS_ASSETS_STAGE_SUMMARIZE;
      compilation.hooks.processAssets.tap({ name: "EntryPage", stage }, () => {
        const page = readFileSync(new URL("index.html", import.meta.url), "utf8");
        if (!page.includes(SOURCE_TAG)) throw new Error(`index.html has no ${SOURCE_TAG}`);
        const scripts = [...compilation.entrypoints.get("main").getFiles()].filter((file) => file.endsWith(".js"));
        const tags = scripts.map((file) => `<script defer src="/${file}"></script>`).join("\n  ");
        compilation.emitAsset("index.html", new sources.RawSource(page.replace(SOURCE_TAG, tags)));
      });
    });
  }
}

export default {
  mode: "production",
  entry: { main: "./src/main.js" },
  output: {
    path: fileURLToPath(new URL("dist/webpack", import.meta.url)),
    filename: "assets/[name].[contenthash].js",
    assetModuleFilename: "assets/[name].[contenthash][ext]",
    publicPath: "/",
    clean: true,
  },
  plugins: [new EntryPage()],
};
