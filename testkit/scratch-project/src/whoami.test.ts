// The vendor-backed tool's tests: its identity token verified with WebCrypto against the test
// host's key set, as the vendor's server verifies it; the test host's clock; the refusals; and
// the fetch stand-in that answers `bridge.fetch` in place of the vendor's server.
import {
  assert,
  assertEqual,
  createTestHost,
  runTests,
  waitFor,
  type JsonWebKeySet,
  type TestFixtures,
  type TestHost,
  type TestTool,
} from "@toolbridge/sdk/testing";

const ISSUER = "https://app.example.test";
const AUDIENCE = "https://whoami.tools.example.test";

const manifest = {
  name: "Who am I",
  version: "1.2.0",
  settings: [
    { key: "region", label: "Region", type: "string", default: "north" },
    { key: "apiKey", label: "API key", type: "string", secret: true },
  ],
  permissions: { connect: ["https://api.vendor.test"], identity: true },
};

const fixtures: TestFixtures = {
  user: { id: "u-17", name: "Ada Admin", role: "admin" },
  tenant: { id: "t-4", name: "Harbour Flooring" },
  manifest,
  settings: { region: "south", apiKey: "s3cret-key" },
  token: { issuer: ISSUER, audience: AUDIENCE },
};

interface Claims {
  iss: string;
  aud: string;
  sub: string;
  tid: string;
  role: string;
  tool: string;
  ver: string;
  iat: number;
  exp: number;
  jti: string;
}

function base64url(text: string): Uint8Array<ArrayBuffer> {
  const plain = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(plain, (c) => c.charCodeAt(0));
}

/** Verifies `token` as a vendor's server does: ES256 signature against the key its header names,
 * then audience, issuer and expiry. Throws saying what does not hold. */
async function verify(token: string, jwks: JsonWebKeySet, now = Date.now() / 1000): Promise<Claims> {
  const [header64 = "", payload64 = "", signature64 = ""] = token.split(".");
  const decoder = new TextDecoder();
  const header = JSON.parse(decoder.decode(base64url(header64))) as { alg: string; typ: string; kid: string };
  assertEqual([header.alg, header.typ], ["ES256", "JWT"], "the header");
  const jwk = jwks.keys.find((key) => key.kid === header.kid);
  assert(jwk, `no key ${header.kid} in the key set`);
  const key = await crypto.subtle.importKey("jwk", jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  const signed = new TextEncoder().encode(`${header64}.${payload64}`);
  const valid = await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, base64url(signature64), signed);
  if (!valid) {
    throw new Error("the signature does not verify");
  }
  const claims = JSON.parse(decoder.decode(base64url(payload64))) as Claims;
  if (claims.aud !== AUDIENCE || claims.iss !== ISSUER) {
    throw new Error(`the token is for ${claims.aud} from ${claims.iss}`);
  }
  if (claims.exp <= now) {
    throw new Error("the token has expired");
  }
  return claims;
}

/** Mounts the tool, answers its call to the vendor in place of the vendor's server, clicks
 * "Check" and resolves with the token and API key the vendor got and what the tool then showed. */
async function checked(
  host: TestHost,
  options: { identity?: boolean } = {},
): Promise<{ token: string | null; key: string | null; status: string }> {
  const tool: TestTool = host.mount({ entry: "/whoami.html", type: "standalone", slug: "whoami", ...options });
  await tool.ready();
  let token: string | null = null;
  let key: string | null = null;
  host.onFetch((request) => {
    token = request.headers.get("authorization")?.replace(/^Bearer /, "") ?? null;
    key = request.headers.get("x-api-key");
    return Response.json({ name: "Ada at Harbour" });
  });
  const button = tool.$<HTMLButtonElement>("#check");
  await waitFor(() => !button.disabled, { message: "the tool ready" });
  const status = tool.$("#status");
  const before = status.textContent;
  button.click();
  await waitFor(() => status.textContent !== before, { message: "the check" });
  return { token, key, status: status.textContent ?? "" };
}

await runTests({
  async "the token verifies with the test host's keys and names the user, tenant and tool"() {
    const host = await createTestHost(fixtures);
    const { token, key, status } = await checked(host);
    assertEqual(status, "The vendor knows you as Ada at Harbour.");
    assertEqual(key, "s3cret-key", "the secret setting, put in for {{secret.apiKey}}");
    assert(token, "the tool sent a token");
    const claims = await verify(token, host.backend.jwks());
    assertEqual(
      [claims.sub, claims.tid, claims.role, claims.tool, claims.ver, claims.exp - claims.iat],
      ["u-17", "t-4", "admin", "whoami", "1.2.0", 300],
    );
    const other = await createTestHost(fixtures);
    let refused = "";
    await verify(token, other.backend.jwks()).catch((error: Error) => (refused = error.message));
    assert(refused.startsWith("no key"), `another test host's keys verify it: ${refused}`);
  },

  async "a token issued by a clock set in the past has expired"() {
    const host = await createTestHost(fixtures);
    host.backend.setNow(Math.floor(Date.now() / 1000) - 600);
    const { token } = await checked(host);
    assert(token, "the tool sent a token");
    let refused = "";
    await verify(token, host.backend.jwks()).catch((error: Error) => (refused = error.message));
    assertEqual(refused, "the token has expired");
  },

  async "a tool whose manifest does not ask for identity gets no token"() {
    const without = { ...fixtures, manifest: { ...manifest, permissions: { connect: manifest.permissions.connect } } };
    const host = await createTestHost(without);
    // Mounted as its manifest says: the host refuses without asking the backend.
    const { status } = await checked(host);
    assert(status.startsWith("No token: "), status);
    assertEqual(host.callsTo("auth.getToken").map((call) => call.outcome), ["NOT_ALLOWED"]);
    assertEqual(host.backend.requests.filter((request) => request.path.endsWith("/token")).length, 0);
    // Mounted as if it asked: the backend refuses it, as the platform's server does.
    const forced = await createTestHost(without);
    await checked(forced, { identity: true });
    assertEqual(forced.callsTo("auth.getToken").map((call) => call.outcome), ["NOT_ALLOWED"]);
    assertEqual(forced.backend.requests.filter((request) => request.path.endsWith("/token")).map((r) => r.status), [403]);
  },

  async "bytes go to the vendor and back unchanged"() {
    const host = await createTestHost(fixtures);
    const tool = host.mount({ entry: "/whoami.html", type: "standalone", slug: "whoami" });
    await tool.ready();
    let sent: number[] = [];
    host.onFetch(async (request) => {
      sent = [...new Uint8Array(await request.arrayBuffer())];
      return new Response(new Uint8Array([255, 0, 7]), { status: 201 });
    });
    const upload = tool.$<HTMLButtonElement>("#upload");
    await waitFor(() => !upload.disabled, { message: "fetch offered" });
    upload.click();
    await waitFor(() => tool.$("#status").textContent?.startsWith("The vendor answered"), { message: "the answer" });
    assertEqual(sent, [0, 1, 2, 255]);
    assertEqual(tool.$("#status").textContent, "The vendor answered 201 with 255,0,7.");
  },

  async "secret settings stay out of what the tool reads"() {
    const host = await createTestHost(fixtures);
    assertEqual(host.backend.settings, { region: "south" });
    assertEqual(host.backend.secretKeys, ["apiKey"]);
    assertEqual(host.setSettings({ region: "east", apiKey: "new-key" }, "whoami"), { region: "east" });
    assertEqual(host.backend.secretKeys, ["apiKey"]);
  },

  async "the organisation's context reaches the tool, and a change of it too"() {
    const host = await createTestHost({
      ...fixtures,
      tenant: { ...fixtures.tenant, cultureCode: "en-GB", timeZone: "Europe/London", currency: "GBP", theme: "light" },
      user: { ...fixtures.user, theme: "dark" },
    });
    const user = host.backend.user;
    assertEqual([user.timeZone, user.currency, user.locale, user.theme], ["Europe/London", "GBP", "en-GB", "dark"]);
    const tool = host.mount({ entry: "/whoami.html", type: "standalone", slug: "whoami" });
    await tool.ready();
    assert(tool.capabilities.includes("context.changed"), `offered: ${tool.capabilities.join(", ")}`);
    const theme = () => tool.document.documentElement.dataset["tbTheme"];
    await waitFor(() => theme() === "dark", { message: "the user's own theme on the tool's page" });
    host.setContext({ theme: "light" });
    await waitFor(() => theme() === "light", { message: "the changed theme on the tool's page" });
  },

  async "the fetch stand-in replaces the placeholders and answers with the handler's response"() {
    const host = await createTestHost(fixtures);
    const send = (request: unknown) =>
      host.backend.fetch(new Request("/tools/whoami/fetch", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(request),
      }));
    const unanswered = await send({ url: "https://api.vendor.test/prices", method: "GET" });
    assertEqual(unanswered.status, 500);
    assert((await unanswered.text()).includes("onFetch"), "it says to register a handler");

    const seen: { url: string; method: string; key: string | null; auth: string | null; body: number[]; tool: string }[] = [];
    host.onFetch(async (request, info) => {
      seen.push({
        url: request.url,
        method: request.method,
        key: request.headers.get("x-api-key"),
        auth: request.headers.get("authorization"),
        body: [...new Uint8Array(await request.arrayBuffer())],
        tool: info.tool,
      });
      return new Response(new Uint8Array([0, 255, 7]), { status: 201, headers: { "content-type": "application/octet-stream" } });
    });
    const answered = await send({
      url: "https://api.vendor.test/prices?key={{secret.apiKey}}",
      method: "POST",
      headers: [["X-Api-Key", "{{secret.apiKey}}"], ["Authorization", "Bearer {{token}}"]],
      body: { base64: "AAEC" },
    });
    assertEqual(answered.status, 200);
    const body = (await answered.json()) as { status: number; headers: [string, string][]; body: string };
    assertEqual([body.status, body.headers, body.body], [201, [["content-type", "application/octet-stream"]], "AP8H"]);
    const [request] = seen;
    assert(request, "the handler was asked");
    assertEqual([request.url, request.method, request.key, request.body, request.tool],
      ["https://api.vendor.test/prices?key=s3cret-key", "POST", "s3cret-key", [0, 1, 2], "whoami"]);
    const claims = await verify(request.auth?.replace(/^Bearer /, "") ?? "", host.backend.jwks());
    assertEqual(claims.tool, "whoami");

    const elsewhere = await send({ url: "https://elsewhere.test/", method: "GET" });
    assertEqual([elsewhere.status, ((await elsewhere.json()) as { code: string }).code], [403, "NOT_ALLOWED"]);
    host.onFetch(() => {
      throw new Error("the vendor is down");
    });
    const failed = await send({ url: "https://api.vendor.test/", method: "GET" });
    const problem = (await failed.json()) as { code: string; detail: string };
    assertEqual(problem.code, "BACKEND_UNAVAILABLE");
    assert(problem.detail.includes("the vendor is down"), problem.detail);
  },
});
