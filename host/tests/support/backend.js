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
