// A small quoting extension: lists the catalog and adds its first product to the open quote.
// bridge.js comes from the package, imported here rather than loaded by a script tag, and so do
// the page helpers.
import "@toolbridge/sdk";
import type { BridgeAddLineDto, BridgeProductDto } from "@toolbridge/sdk";
import { describeError, h } from "@toolbridge/sdk/ui";

function element<E extends HTMLElement>(id: string): E {
  const found = document.getElementById(id);
  if (!found) {
    throw new Error(`the page has no #${id}`);
  }
  return found as E;
}

function lineFor(product: BridgeProductDto): BridgeAddLineDto {
  return {
    lineType: "product",
    linkedItemId: product.id,
    description: product.name,
    qty: 2,
    unit: "T_SQUARE_METRE",
    unitPrice: product.price,
    taxRate: 0.15,
  };
}

async function start(): Promise<void> {
  const status = element<HTMLParagraphElement>("status");
  const add = element<HTMLButtonElement>("add");
  const info = await bridge.ready();
  status.textContent = `Connected to SDK ${info.sdkVersion}.`;
  const page = await bridge.products.list({ page: 1, pageSize: 50 });
  element<HTMLUListElement>("products").append(
    ...page.items.map((product) => h("li", {}, `${product.sku}: ${product.name}`)),
  );
  const first = page.items[0];
  add.disabled = !first || !bridge.supports("quotes.addLines");
  add.addEventListener("click", async () => {
    if (!first) {
      return;
    }
    try {
      await bridge.quotes.addLines([lineFor(first)]);
      if (bridge.supports("ui.toast")) {
        await bridge.ui.toast({ kind: "success", message: `Added ${first.name}` });
      }
    } catch (error) {
      status.textContent = `Not added: ${describeError(error)}`;
    }
  });
}

/** Never called: the typings must refuse a misspelt method. */
export function misspelt(): void {
  // @ts-expect-error: `lst` is not a method of bridge.products
  void bridge.products.lst();
}

void start();
