// Compiled on its own by `cargo xtask test`, which expects tsc to refuse it: `lst` is no method.
import "@toolbridge/sdk";

export async function productCount(): Promise<number> {
  const page = await bridge.products.lst({ page: 1, pageSize: 10 });
  return page.totalCount;
}
