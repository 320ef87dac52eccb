// Page backends for the host's `backend` option: objects whose
// `fetch(request)` answers with a `new Response(...)`, keeping every request
// they were given so that the tests can read what the host sent.

// What a test reads of a request the host made.
async function describe(request) {
  const body = request.method === "GET" || request.method === "HEAD" ? "" : await request.clone().text();
  return {
    method: request.method,
    url: request.url,
    accept: request.headers.get("accept"),
    contentType: request.headers.get("content-type"),
    ifNoneMatch: request.headers.get("if-none-match"),
    ifMatch: request.headers.get("if-match"),
    idempotencyKey: request.headers.get("idempotency-key"),
    credentials: request.credentials,
    mode: request.mode,
    body: body ? JSON.parse(body) : null,
    isRequest: request instanceof Request,
  };
}

// A backend that passes each request on to the real server and answers a
// copy of the server's answer built with `new Response`, so that what the
// host reads is the page backend's own Response.
export function relayBackend() {
  const seen = [];
  const statuses = [];
  return {
    seen,
    statuses,
    backend: {
      async fetch(request) {
        seen.push(await describe(request));
        const answer = await fetch(request);
        statuses.push(answer.status);
        const body = answer.status === 304 ? null : await answer.text();
        return new Response(body, { status: answer.status, headers: answer.headers });
      },
    },
  };
}

// A backend like `relayBackend` that answers requests to a URL ending in
// `suffix` itself (listing them in `answered`), with `{status, text}`: as a `Response`, or with
// `likeResponse` set, as an object that only reads like one (a status,
// headers and `text()`, no `arrayBuffer()`).
export function relayBackendAnswering(suffix, answer) {
  const relay = relayBackend();
  const passOn = relay.backend.fetch;
  const headers = { "Content-Type": "application/json" };
  const respond = () =>
    answer.likeResponse
      ? { status: answer.status, headers: new Headers(headers), text: async () => answer.text }
      : new Response(answer.text, { status: answer.status, headers });
  // What it answered itself, described as `seen` describes what it passed on.
  relay.answered = [];
  relay.backend.fetch = async (request) => {
    if (!request.url.endsWith(suffix)) return passOn(request);
    relay.answered.push(await describe(request));
    return respond();
  };
  return relay;
}

// A backend that answers every request the same way, from memory:
// `{status, body, headers}` (the body JSON, or text when `text` is set),
// `{hang: true}` (never answers, whatever the request's signal does),
// `{throws: true}`, `{networkError: true}` (`Response.error()`), or
// `{notResponse: true}`. A cycle makes the object something JSON cannot
// hold, as a real API client may be.
export function scriptedBackend(answer) {
  const seen = [];
  const signals = [];
  const backend = {
    fetch(request) {
      signals.push(request.signal);
      seen.push({ method: request.method, url: request.url });
      if (answer.hang) return new Promise(() => {});
      if (answer.throws) throw new TypeError("no route to the backend");
      if (answer.networkError) return Promise.resolve(Response.error());
      if (answer.notResponse) return Promise.resolve({ ok: true, json: {} });
      const body = answer.text !== undefined ? answer.text : JSON.stringify(answer.body);
      return Promise.resolve(new Response(body, { status: answer.status, headers: answer.headers || {} }));
    },
  };
  backend.self = backend;
  return { seen, backend, aborted: () => signals.map((signal) => signal.aborted) };
}

// Bytes as base64 and back, a chunk at a time (a megabyte at once is too many arguments).
function toBase64(bytes) {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function fromBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

// A backend that answers the server's fetch for a tool (`POST …/tools/{slug}/fetch`) from
// memory: by default as a tool's server that echoes the request's body (a text body as its
// UTF-8 bytes) with status 200, or with `answer` (`{status, body, headers}`, the body JSON) for
// every request. It keeps in `fetched` what each request carried: the path, its content type
// and the FetchRequest with its body summed up (`{text}`, or `{base64: length, pattern}` where
// `pattern` says whether byte i is i % 251). Anything else is answered 404 and kept in
// `others`.
export function fetchBackend(answer) {
  const fetched = [];
  const others = [];
  const backend = {
    async fetch(request) {
      const url = new URL(request.url);
      if (request.method !== "POST" || !/\/tools\/[^/]+\/fetch$/.test(url.pathname)) {
        others.push({ method: request.method, url: request.url });
        return new Response(null, { status: 404 });
      }
      const sent = JSON.parse(await request.text());
      let bytes = new Uint8Array(0);
      let body = null;
      if (sent.body && "text" in sent.body) {
        bytes = new TextEncoder().encode(sent.body.text);
        body = { text: sent.body.text };
      } else if (sent.body && "base64" in sent.body) {
        bytes = fromBase64(sent.body.base64);
        body = { base64: bytes.length, pattern: bytes.every((b, i) => b === i % 251) };
      }
      fetched.push({
        path: url.pathname,
        contentType: request.headers.get("content-type"),
        request: { url: sent.url, method: sent.method, headers: sent.headers, body },
      });
      if (answer) {
        return new Response(JSON.stringify(answer.body), {
          status: answer.status,
          headers: answer.headers || { "content-type": "application/problem+json" },
        });
      }
      const echoed = { status: 200, headers: [["content-type", "application/octet-stream"], ["x-length", String(bytes.length)]], body: toBase64(bytes) };
      return new Response(JSON.stringify(echoed), { status: 200, headers: { "content-type": "application/json" } });
    },
  };
  return { fetched, others, backend };
}


// A backend that passes each request on to the real server, or, once `setDown(true)`, fails
// it on the network as a dropped connection does: the request goes to `dropUrl` (the fault
// server's `/drop`, which closes the connection without a byte) and the browser's `fetch`
// rejects. `seen` keeps each request with whether the backend was down.
export function switchableBackend(dropUrl) {
  const state = { down: false, seen: [] };
  state.setDown = (down) => {
    state.down = down;
  };
  state.backend = {
    fetch(request) {
      const url = new URL(request.url);
      state.seen.push({ method: request.method, path: url.pathname, down: state.down });
      return state.down ? fetch(dropUrl, { cache: "no-store" }) : fetch(request);
    },
  };
  return state;
}

// A backend that passes each request on to the real server and answers what it answered, except
// that once `loseNextAnswer()` is called, the next PUT reaches the server and its answer is lost:
// the host sees the request fail on the network (`dropUrl`, the fault server's `/drop`, closes
// the connection without a byte). `seen` keeps each request as `describe` reads it, with the
// answer's status, `ETag` and `Idempotent-Replayed` (status 0 for the lost one).
export function answerLosingBackend(dropUrl) {
  const state = { lose: false, seen: [] };
  state.loseNextAnswer = () => {
    state.lose = true;
  };
  state.backend = {
    async fetch(request) {
      const entry = await describe(request);
      state.seen.push(entry);
      const answer = await fetch(request);
      const lost = state.lose && request.method === "PUT";
      entry.status = lost ? 0 : answer.status;
      entry.etag = answer.headers.get("etag");
      entry.replayed = answer.headers.get("idempotent-replayed");
      if (lost) {
        state.lose = false;
        return fetch(dropUrl, { cache: "no-store" });
      }
      return answer;
    },
  };
  return state;
}
