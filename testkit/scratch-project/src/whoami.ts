// A small tool with a vendor server behind it: it asks the platform for an identity token, has
// the app's server call the vendor with it and the organisation's secret API key
// (`bridge.fetch`), and shows who the vendor says the user is. Its test runs it on the test host,
// which signs the token with a test key, publishes that key's JWKS, and answers the fetch with
// the test's handler.
import "@toolbridge/sdk";
import { describeError } from "@toolbridge/sdk/ui";

/** The vendor's server, which the manifest lists in `permissions.connect`. */
const VENDOR = "https://api.vendor.test";

function element<E extends HTMLElement>(id: string): E {
  const found = document.getElementById(id);
  if (!found) {
    throw new Error(`the page has no #${id}`);
  }
  return found as E;
}

async function check(status: HTMLElement): Promise<void> {
  try {
    // The token proves who the user is; the API key is the organisation's secret setting, which
    // the app's server puts in for `{{secret.apiKey}}`: the page never sees it.
    const token = await bridge.auth.getToken();
    const response = await bridge.fetch(`${VENDOR}/whoami`, {
      headers: { Authorization: `Bearer ${token}`, "X-Api-Key": "{{secret.apiKey}}" },
    });
    if (!response.ok) {
      status.textContent = `The vendor refused the token (${response.status}).`;
      return;
    }
    const answer = (await response.json()) as { name: string };
    status.textContent = `The vendor knows you as ${answer.name}.`;
  } catch (error) {
    status.textContent = `No token: ${describeError(error)}`;
  }
}

/** Sends the vendor bytes and shows what came back, as a tool uploading a photo would. */
async function upload(status: HTMLElement): Promise<void> {
  try {
    const response = await bridge.fetch(`${VENDOR}/echo`, {
      method: "POST",
      headers: { "Content-Type": "application/octet-stream" },
      body: new Uint8Array([0, 1, 2, 255]),
    });
    const bytes = new Uint8Array(await response.arrayBuffer());
    status.textContent = `The vendor answered ${response.status} with ${[...bytes].join(",")}.`;
  } catch (error) {
    status.textContent = `Not sent: ${describeError(error)}`;
  }
}

async function start(): Promise<void> {
  const status = element<HTMLParagraphElement>("status");
  const button = element<HTMLButtonElement>("check");
  const send = element<HTMLButtonElement>("upload");
  await bridge.ready();
  button.disabled = false;
  send.disabled = !bridge.supports("fetch");
  button.addEventListener("click", () => void check(status));
  send.addEventListener("click", () => void upload(status));
}

void start();
