// Shows where the page is and whom the host says it serves, then adds one line on request:
// what the deployment suite reads to tell that the handshake and addLines work through the proxy.
const show = (id, text) => {
  document.getElementById(id).textContent = text;
};

show("origin", window.location.origin);

window.bridge.context.get().then(
  (context) => {
    show("context", `connected as ${context.userEmail}`);
    document.getElementById("add").disabled = false;
  },
  (error) => show("context", `failed: ${error.code} ${error.message}`),
);

document.getElementById("add").addEventListener("click", () => {
  show("status", "adding…");
  window.bridge.quotes
    .addLines([
      { description: "Probe line", qty: 2, unitPrice: 12.5, taxRate: 0.15, lineType: "product" },
    ])
    .then(
      () => show("status", "added"),
      (error) => show("status", `failed: ${error.code} ${error.message}`),
    );
});
