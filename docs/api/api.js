// Renders the server's own OpenAPI document with Redoc (pinned in sdk/js-tools, copied here by
// `cargo xtask build`). The document is fetched from this server: nothing leaves it.
"use strict";

(function () {
  const container = document.getElementById("reference");
  const failed = (why) => {
    const message = document.createElement("p");
    message.className = "failed";
    message.textContent = `The API reference could not be shown: ${why}. The document itself is at /api/v1/openapi.json.`;
    container.replaceChildren(message);
  };
  if (typeof Redoc === "undefined") {
    failed("redoc.standalone.js did not load (build the documentation with `cargo xtask build`)");
    return;
  }
  const options = {
    expandResponses: "200,201",
    hideHostname: false,
    jsonSampleExpandLevel: 3,
    pathInMiddlePanel: true,
    sortTagsAlphabetically: false,
    theme: {
      colors: { primary: { main: "#1f5f8b" } },
      typography: { fontFamily: "system-ui, -apple-system, 'Segoe UI', sans-serif", headings: { fontFamily: "system-ui, -apple-system, 'Segoe UI', sans-serif" }, code: { fontFamily: "ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace" } },
    },
  };
  Redoc.init("/api/v1/openapi.json", options, container, (error) => {
    if (error) {
      failed(error.message || String(error));
    } else {
      document.body.dataset.rendered = "true";
    }
  });
})();
