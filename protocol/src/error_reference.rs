//! The reference text of each error code, from which the `/docs/errors`
//! page is generated: one anchor per [`ErrorCode`], with what the code
//! means, which operations answer with it, and what to do about it.
//!
//! [`ErrorCode::reference`] matches every code with no wildcard, so a code
//! added to [`ErrorCode`] without its entry here does not compile, and the
//! page cannot leave it out. Problem bodies point at these anchors
//! (`"type": "/docs/errors#INVALID_PARAMS"`, see [`crate::problem`]).
//!
//! Each field is plain Markdown, one to four sentences: inline code in
//! backticks, no headings or lists, ending with a full stop.

use crate::error::ErrorCode;

/// What the documentation says about one error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorReference {
    /// What the code means: what went wrong, and what the caller can rely
    /// on (for instance that nothing was changed).
    pub meaning: &'static str,
    /// Which operations answer with it: the bridge methods, and whether the
    /// host module or bridge.js itself raises it; the REST and session
    /// endpoints, with the HTTP status and the headers and body members
    /// that come with it.
    pub given_by: &'static str,
    /// What a tool's author, and a REST integrator where that differs,
    /// should do about it.
    pub what_to_do: &'static str,
}

impl ErrorCode {
    /// The HTTP status the REST API answers this code with, or `None` for the codes that only
    /// the bridge gives (raised by the host module or by bridge.js, never sent by the server).
    pub fn rest_status(self) -> Option<u16> {
        match self {
            ErrorCode::InvalidParams
            | ErrorCode::NotAllowed
            | ErrorCode::QuoteLocked
            | ErrorCode::NotFound
            | ErrorCode::RateLimited
            | ErrorCode::Unauthenticated
            | ErrorCode::BackendUnavailable
            | ErrorCode::Timeout
            | ErrorCode::Conflict
            | ErrorCode::Internal => Some(self.http_status()),
            ErrorCode::NoOpenQuote
            | ErrorCode::MethodNotFound
            | ErrorCode::NotConnected
            | ErrorCode::Offline => None,
        }
    }

    /// The reference text of this code, for its anchor on `/docs/errors`.
    pub fn reference(self) -> ErrorReference {
        match self {
            ErrorCode::InvalidParams => INVALID_PARAMS,
            ErrorCode::NotAllowed => NOT_ALLOWED,
            ErrorCode::NoOpenQuote => NO_OPEN_QUOTE,
            ErrorCode::QuoteLocked => QUOTE_LOCKED,
            ErrorCode::NotFound => NOT_FOUND,
            ErrorCode::RateLimited => RATE_LIMITED,
            ErrorCode::Unauthenticated => UNAUTHENTICATED,
            ErrorCode::BackendUnavailable => BACKEND_UNAVAILABLE,
            ErrorCode::MethodNotFound => METHOD_NOT_FOUND,
            ErrorCode::Timeout => TIMEOUT,
            ErrorCode::NotConnected => NOT_CONNECTED,
            ErrorCode::Offline => OFFLINE,
            ErrorCode::Conflict => CONFLICT,
            ErrorCode::Internal => INTERNAL,
        }
    }
}

/// `INVALID_PARAMS`.
const INVALID_PARAMS: ErrorReference = ErrorReference {
    meaning: "The request breaks one or more rules, and the answer lists every \
        problem, not only the first, each as `{path, message}`. The `path` names \
        the field (`lines[3].qty`, `customerEmail`, `pageSize`) or the header \
        (`Idempotency-Key`), and is empty when the request as a whole is wrong. \
        Nothing was changed: an `addLines` batch is taken whole or not at all, and \
        a refused REST request leaves no trace.",
    given_by: "On the bridge the list is `details[]` of the `BridgeError`, and the \
        host raises it before any request for a bad argument of any method (an \
        `addLines` batch, `quotes.create`, the `page`, `pageSize` and `codes` of the \
        lists, `ui.toast`, `ui.confirm`), for a port message that is no JSON-RPC \
        2.0 call, and for a backend 400 or 422, keeping the server's paths. \
        bridge.js raises it itself for arguments that cannot be cloned to the host, \
        and `bridge.on` throws it at once for an unknown event. Over REST it is 422 \
        with the list as `errors[]`, for a body, query or header that breaks a \
        rule, which includes a `customerId` or `skuId` naming nothing of the \
        tenant, a `quoteRef` already used, an `Idempotency-Key` reused with another \
        body, a refused tool bundle (each path the bundle's entry, each message \
        ending in the rule's id) and a request to `POST /api/v1/tools/{slug}/fetch` \
        that breaks a rule of the server's fetch (its `url`, `method`, `headers` or \
        `body`, a body over 5 MiB, a placeholder naming no secret that is set). The \
        same code, without `errors[]`, comes with 400 for a body that is not JSON or \
        not sent as `Content-Type: application/json`, and with 413 and \
        `Connection: close` for a JSON body over 2 MiB (8 MiB for the server's \
        fetch) or a tool bundle over 10 MB.",
    what_to_do: "Fix the field each `path` names, as its `message` says, and send \
        the request again; sent unchanged, it gets the same answer. A tool should \
        show each message next to the input it names rather than only the first \
        one. For a 400, send valid JSON with `Content-Type: application/json`; for \
        a 413, send a smaller body.",
};

/// `NOT_ALLOWED`.
const NOT_ALLOWED: ErrorReference = ErrorReference {
    meaning: "The caller is known, but may not do this: the tool's type, the \
        user's role or the API key's scopes do not cover it, or the host page does \
        not offer the extension. Asking again gets the same answer.",
    given_by: "On the bridge, from the host: `quotes.addLines` and \
        `quotes.getOpen` from a `standalone` tool, `quotes.create` and \
        `quotes.addLines` by a Field user, `ui.toast`, `ui.confirm` or \
        `ui.openQuote` where the page has not set the hook, `settings.get` from a \
        tool mounted without settings, a second `ui.confirm` while one is open, and \
        a backend 403. Over REST it is 403: for an API key without the scope the \
        operation needs (the `detail` names it, such as `customers:read`), for a \
        session user whose role may not do it (a Field user writing quotes; anyone \
        but an Admin or Super User on webhook endpoints or `/api/settings`), for an \
        API key on an endpoint of the session API (`/api/v1/me`, `/api/session`, \
        `/api/tools`, `/api/events`, `/api/settings`, `/api/v1/tools/{slug}/token` \
        and `/fetch`), and for a session request or a sign-in from another origin. \
        `POST /api/v1/tools/{slug}/fetch` also answers 403 for a URL whose origin \
        the tool's `permissions.connect` does not list (the `detail` names the \
        origin and what is listed), and for a host that is or resolves to a \
        private, loopback or link-local address.",
    what_to_do: "A tool should ask `bridge.supports(method)` before it offers an \
        action and hide what this tool or user cannot do, rather than retry. A REST \
        integrator should use a key that has the scope the `detail` names (an \
        administrator creates one with `toolbridge keys create --scopes` or in the \
        app's settings); the session API is for the app's own pages, and other \
        sites use an API key.",
};

/// `NO_OPEN_QUOTE`.
const NO_OPEN_QUOTE: ErrorReference = ErrorReference {
    meaning: "The call works on the quote open in the app's quote editor, and no \
        quote is open there.",
    given_by: "Only the bridge, from the host: `quotes.addLines` and \
        `quotes.getOpen`, the methods of `quoting_extension` tools, while the \
        editor has no quote open. The REST API never answers with it, as its \
        requests name their quote by id.",
    what_to_do: "Ask the user to open a quote (or create one) in the app, then \
        try again. A tool that listens to `quote.changed` can keep the action \
        disabled until it hears `opened`, and disable it again on `closed`.",
};

/// `QUOTE_LOCKED`.
const QUOTE_LOCKED: ErrorReference = ErrorReference {
    meaning: "The quote is no longer a Draft (it has been sent, or is being \
        sent), so its lines and header can no longer change. The message names the \
        quote's reference and status, and the quote is left as it was.",
    given_by: "On the bridge: `quotes.addLines` while the quote open in the \
        editor is not a Draft, from the host, which also reports a backend 409 as \
        this code. Over REST it is 409, from `PATCH /api/v1/quotes/{id}`, \
        `PUT /api/v1/quotes/{id}/lines` and `POST /api/v1/quotes/{id}/send` on a \
        quote that is not a Draft.",
    what_to_do: "Do not retry, as the quote stays locked. A tool should tell the \
        user that the quote was sent and can no longer change, and can stop \
        offering the action when `quote.changed` says `sent`. A REST integrator \
        should read the quote's `status` with `GET /api/v1/quotes/{id}` and put \
        further changes on a new quote.",
};

/// `NOT_FOUND`.
const NOT_FOUND: ErrorReference = ErrorReference {
    meaning: "The id or path names nothing the caller's tenant has. An id of \
        another tenant gets exactly the same answer as one that does not exist, so \
        whether it exists elsewhere is never revealed.",
    given_by: "Over REST it is 404: for an unknown id in `/api/v1/quotes/{id}` \
        (read, change, save lines, send), `/api/v1/webhook-endpoints/{id}` and its \
        deliveries, and the keys and tools under `/api/settings`; for a `jobId` \
        naming no job in the session form of `POST /api/v1/quotes`; for an id that \
        is not valid UTF-8; and for a path under `/api` that is no endpoint (such \
        as `/api/v2/quotes`). On the bridge: `quotes.create` with an unknown \
        `jobId`, and `ui.openQuote` with an id that is no quote of the user's \
        organisation, both from the backend through the host. An unknown \
        `customerId` or `skuId` inside a request body is `INVALID_PARAMS` instead.",
    what_to_do: "Check the id rather than retry it: refresh the list it came \
        from, as the record may have been removed, and make sure the key or session \
        belongs to the tenant that owns it. For an unknown path, see the endpoints \
        in `/api/v1/openapi.json`.",
};

/// `RATE_LIMITED`.
const RATE_LIMITED: ErrorReference = ErrorReference {
    meaning: "Too many requests within a window. `retryAfter` says how many whole \
        seconds (at least 1) to wait before a retry can succeed.",
    given_by: "Over REST it is 429 once an API key has used up its window (120 \
        requests per 60 s unless the key was created with another \
        `--rate-limit`), with a `Retry-After` header equal to the body's \
        `retryAfter` and `X-RateLimit-Remaining: 0`, while `X-RateLimit-Reset` \
        gives the Unix time, in seconds, when the window resets. \
        `POST /api/session` also answers 429, with `Retry-After`, after 5 failed \
        sign-ins for one email, until its 15-minute window ends. On the bridge: \
        `ui.toast` beyond 5 toasts from one tool in 10 s, from the host, and any \
        call whose backend answered 429, the host passing on its `Retry-After` as \
        `retryAfter`. `POST /api/v1/tools/{slug}/fetch` answers 429 with \
        `Retry-After` while a tool has 20 requests in flight for the tenant, or once \
        it has made 300 in the current minute.",
    what_to_do: "Wait the seconds that `retryAfter` (or the `Retry-After` header) \
        gives, then retry; do not retry sooner or in a loop. A REST integrator can \
        pace its requests by `X-RateLimit-Remaining` and `X-RateLimit-Reset` rather \
        than run into the limit, or ask for a key with a higher limit.",
};

/// `UNAUTHENTICATED`.
const UNAUTHENTICATED: ErrorReference = ErrorReference {
    meaning: "The caller could not be identified: no credentials were sent, the \
        API key is unknown, malformed or revoked, the user's session has ended, or \
        the email or password given to sign in is wrong.",
    given_by: "Over REST it is 401 with `WWW-Authenticate: Bearer`: for a request \
        with neither an `Authorization` header nor a session cookie, with a scheme \
        other than `Bearer`, with a key that is unknown or revoked, or with a \
        session that has ended, and for a wrong email or password at \
        `POST /api/session`. On the bridge: any call the host needs the \
        backend for (`context.get` before the user is known, the list methods, \
        `quotes.create`, `ui.openQuote`) when the backend answered 401. The host \
        then ends the session, so tools that listen to `session.ended` hear \
        `expired`.",
    what_to_do: "A tool should ask the user to sign in to the app again and then \
        reopen it; retrying cannot succeed before that. A REST integrator should \
        send its key as `Authorization: Bearer <key>`, and, when the key was \
        revoked or lost, have an administrator create a new one \
        (`toolbridge keys create` or the app's settings), as a key is shown only \
        once.",
};

/// `BACKEND_UNAVAILABLE`.
const BACKEND_UNAVAILABLE: ErrorReference = ErrorReference {
    meaning: "The backend behind the host, or the tool's own server behind the \
        server's fetch, could not be reached, answered what cannot be passed on, or \
        failed, so the call could not be carried out. It says nothing about the \
        request itself.",
    given_by: "On the bridge, from the host: any call it needs the backend for \
        (`context.get`, the list methods, `quotes.create`, `ui.openQuote`, \
        `bridge.fetch`) when the request gets no answer within the host's deadline \
        (20 s unless the page set `requestTimeoutMs`) or is answered with any 5xx \
        status, a server's `INTERNAL` 500 included; a request that fails on the \
        network is `OFFLINE` instead. Over REST \
        it is 502, from `POST /api/v1/tools/{slug}/fetch` only, when the tool's own \
        server does not resolve, cannot be reached, fails the TLS handshake or \
        answers more than 5 MiB; the `detail` names the origin, never a secret. A \
        503 or 504 from any other endpoint comes from a proxy in front of the \
        server.",
    what_to_do: "Offer the user a retry after a short wait. A request that timed \
        out may still have been carried out, so before retrying `quotes.create` \
        look for the quote with `quotes.list`. If it persists, tell the operator, \
        who can check the server's `/readyz` and its log, or for `bridge.fetch` the \
        tool's vendor, whose server or certificate is at fault.",
};

/// `METHOD_NOT_FOUND`.
const METHOD_NOT_FOUND: ErrorReference = ErrorReference {
    meaning: "The method is not one the host knows: the host is older than the \
        method, or its name is misspelt.",
    given_by: "Only the bridge, from the host, as JSON-RPC error `-32601` with \
        the call's `id`: an extension method (`quotes.getOpen`, `settings.get`, \
        `ui.toast`, `ui.confirm`, `ui.openQuote`) sent to a host that predates \
        it, or a message on the port naming no bridge method. The REST API does \
        not use it: a path that is no endpoint is `NOT_FOUND`.",
    what_to_do: "Call an extension only when `bridge.supports(name)` answers \
        `true`, and keep the plain 2.1.0 behaviour otherwise. A name sent by hand \
        on the port must be one of the bridge's methods, spelt exactly; retrying \
        gets the same answer.",
};

/// `TIMEOUT`.
const TIMEOUT: ErrorReference = ErrorReference {
    meaning: "A bridge call got no reply from the host within the call deadline \
        of 30 s, or a tool's own server did not answer the server's fetch in full \
        within 15 s. The call may still have been carried out.",
    given_by: "Raised by bridge.js itself for any call with no reply by its \
        deadline, except `ui.confirm` and `ui.openQuote`, which wait for the user as \
        long as it takes; the host gives up on a slow backend sooner (after 20 s by \
        default) and answers `BACKEND_UNAVAILABLE`, so such a `TIMEOUT` usually \
        means that the host page itself did not answer. Over REST it is 504, from \
        `POST /api/v1/tools/{slug}/fetch` only, when the tool's server has not \
        answered in full within 15 s, and the host passes it on to `bridge.fetch`. \
        No other endpoint answers with it.",
    what_to_do: "Offer the user a retry, and before retrying `quotes.create` look \
        for the quote with `quotes.list`. If it keeps happening, the host page is \
        stalled or dropped the call: its debug log (`host.debug`, \
        `host.debugLog()`) shows whether the call arrived.",
};

/// `NOT_CONNECTED`.
const NOT_CONNECTED: ErrorReference = ErrorReference {
    meaning: "No host is talking to the tool: its page is not inside a host's \
        frame, or no host answered the handshake within the connect deadline of \
        10 s.",
    given_by: "Raised by bridge.js itself, never sent by the host or the server: \
        at once for every call and for `bridge.ready()` when the page is not in a \
        frame, and, once 10 s have passed with no host answering, for the calls \
        waiting and for those made until a host answers. It also \
        follows when the host drops the tool's hello, because the frame is not one \
        it mounted or the page is not at the origin registered for the tool. The \
        REST API never answers with it.",
    what_to_do: "Open the tool from the app, or run it with \
        `toolbridge serve --dev-tool`, rather than on its own. A host that answers \
        late still connects, so later calls can succeed. When the app shows the \
        frame and the tool still cannot connect, the host's debug log names the \
        origin of the hello it dropped.",
};

/// `OFFLINE`.
const OFFLINE: ErrorReference = ErrorReference {
    meaning: "The server cannot be reached from the browser: the network is down, or \
        the last request to the server failed on the network. A call refused while \
        offline was not sent, so nothing was changed; a request that failed on the \
        network may or may not have reached the server.",
    given_by: "Only the bridge, from the host module, never sent by the server: while \
        the host is offline, at once and without a request, every call that needs the \
        server (`context.get` before the user is known, the list methods, \
        `quotes.create`, `ui.openQuote`, `auth.getToken`, `bridge.fetch`), and any such \
        call whose request fails on the network, which puts the host offline. The host \
        is offline from the browser's `offline` event or a request that failed on the \
        network until the browser's `online` event or an answer to its periodic check, \
        and tools hear each change as `connectivity.changed`. The page's own \
        `host.save`, `host.openQuote` and `host.send` reject with the same code, and the \
        REST API never answers with it.",
    what_to_do: "Keep what the user did and offer to try again once \
        `connectivity.changed` says `online: true`; a tool can disable its \
        server-backed actions while offline, as `quotes.addLines` and \
        `quotes.getOpen` keep working. Before retrying a `quotes.create` whose request \
        failed on the network, look for the quote with `quotes.list`, as it may have \
        been made.",
};

/// `CONFLICT`.
const CONFLICT: ErrorReference = ErrorReference {
    meaning: "The quote changed since the version the change was made against: \
        another device, user or integrator saved it (or sent it) after the client \
        read it, so the `If-Match` the request carried no longer names the quote's \
        current `ETag`. Nothing was changed, and the answer's `ETag` header names \
        the version the quote has now.",
    given_by: "Over REST it is 412 Precondition Failed, from \
        `PUT /api/v1/quotes/{id}/lines` and `PATCH /api/v1/quotes/{id}` sent with an \
        `If-Match` that does not name the quote's current `ETag` (`If-Match: *` \
        matches any version), and from a repeat of such a request with its \
        `Idempotency-Key` when the quote changed again after the first one made \
        its change. A request without `If-Match` never gets it. The host module \
        sends `If-Match` with `host.save()` and the save inside `host.send()`, and \
        rejects them with this code when the quote was changed elsewhere, leaving \
        the open quote as it was; tools never see it on the bridge.",
    what_to_do: "Do not send the same request again, as it gets the same answer. \
        Fetch the quote as it is now (`GET /api/v1/quotes/{id}`, or \
        `host.serverQuote()` on the app's page), show the user both versions, and \
        either take the server's (`host.openQuote(id)`) or keep the user's by \
        sending the change again with the new `ETag` in `If-Match`, or without \
        `If-Match` (`host.save({overwrite: true})`) to overwrite what is there.",
};

/// `INTERNAL`.
const INTERNAL: ErrorReference = ErrorReference {
    meaning: "Something failed that the request did not cause and that no other \
        code describes, such as the server's database, or an answer the host could \
        not make sense of.",
    given_by: "Over REST it is 500, whose body says nothing of the cause and \
        carries the `requestId` (also the `X-Request-Id` header); the server logs \
        one line with that id and the whole chain of causes, down to the \
        database's own message. On the bridge, from the host: a backend answer \
        that is not the JSON expected or has a status no code describes, a page \
        hook (`host.onToast`, `host.onConfirm`, `host.onNavigate`) that threw, or \
        a tool unmounted or reloaded while its call ran; a server 500 reaches a \
        tool as `BACKEND_UNAVAILABLE` instead. bridge.js also uses it for an error \
        reply from the host whose code it cannot read.",
    what_to_do: "Report it rather than retry in a loop. A REST integrator should \
        quote the `requestId` to the server's operator, who finds the cause by \
        searching the log for it. A tool should show the message so that the user \
        can report it, and the host page's debug log records the call.",
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field of every code, named for the failure messages.
    fn fields() -> impl Iterator<Item = (ErrorCode, &'static str, &'static str)> {
        ErrorCode::ALL.into_iter().flat_map(|code| {
            let reference = code.reference();
            [
                (code, "meaning", reference.meaning),
                (code, "given_by", reference.given_by),
                (code, "what_to_do", reference.what_to_do),
            ]
        })
    }

    /// The codes the REST API answers with, each with its status.
    #[test]
    fn every_field_of_every_code_is_written_and_ends_with_a_full_stop() {
        for (code, field, text) in fields() {
            assert!(!text.trim().is_empty(), "{code} {field} is empty");
            assert_eq!(text, text.trim(), "{code} {field} has spaces at an end");
            assert!(
                text.ends_with('.'),
                "{code} {field} ends without a full stop"
            );
            assert!(
                text.starts_with(|c: char| c.is_uppercase() || c == '`')
                    || text.starts_with("bridge.js"),
                "{code} {field} starts in lower case: {text}"
            );
        }
    }

    #[test]
    fn every_field_is_one_line_of_markdown_with_its_code_spans_closed() {
        for (code, field, text) in fields() {
            assert!(!text.contains('\n'), "{code} {field} spans lines");
            assert!(!text.contains("  "), "{code} {field} has a double space");
            assert_eq!(
                text.matches('`').count() % 2,
                0,
                "{code} {field} leaves a code span open: {text}"
            );
        }
    }

    #[test]
    fn every_field_is_one_to_four_sentences() {
        // A sentence ends with a full stop and a space, or at the end; none
        // of the texts uses an abbreviation with a full stop (write "such
        // as" for "e.g.").
        for (code, field, text) in fields() {
            let sentences = text.matches(". ").count() + 1;
            assert!(
                sentences <= 4,
                "{code} {field} has {sentences} sentences: {text}"
            );
        }
    }

    #[test]
    fn the_rest_codes_name_their_status_and_the_others_say_rest_never_answers_them() {
        for code in ErrorCode::ALL {
            let given_by = code.reference().given_by;
            if let Some(status) = code.rest_status() {
                let status = status.to_string();
                assert!(
                    given_by.contains(&format!("it is {status}")),
                    "{code} does not name its status {status}: {given_by}"
                );
            } else {
                assert!(
                    given_by.contains("REST API never answers with it")
                        || given_by.contains("REST API does not"),
                    "{code} does not say that REST never answers with it: {given_by}"
                );
            }
        }
    }

    #[test]
    fn the_headers_and_members_each_code_comes_with_are_named() {
        let mentions = [
            (ErrorCode::InvalidParams, "`details[]`"),
            (ErrorCode::InvalidParams, "`errors[]`"),
            (ErrorCode::InvalidParams, "413"),
            (ErrorCode::InvalidParams, "400"),
            (ErrorCode::RateLimited, "`Retry-After`"),
            (ErrorCode::RateLimited, "`retryAfter`"),
            (ErrorCode::RateLimited, "`X-RateLimit-Reset`"),
            (ErrorCode::Unauthenticated, "`WWW-Authenticate: Bearer`"),
            (ErrorCode::NotAllowed, "scope"),
            (ErrorCode::NotFound, "another tenant"),
            (ErrorCode::NoOpenQuote, "`quotes.addLines`"),
            (ErrorCode::QuoteLocked, "`quotes.addLines`"),
            (ErrorCode::Timeout, "bridge.js itself"),
            (ErrorCode::NotConnected, "bridge.js itself"),
            (ErrorCode::Offline, "`connectivity.changed`"),
            (ErrorCode::Offline, "was not sent"),
            (ErrorCode::MethodNotFound, "`bridge.supports(name)`"),
            (ErrorCode::Conflict, "`If-Match`"),
            (ErrorCode::Conflict, "`ETag`"),
            (ErrorCode::Conflict, "Nothing was changed"),
            (ErrorCode::Internal, "`requestId`"),
            (ErrorCode::Internal, "chain of causes"),
        ];
        for (code, words) in mentions {
            let reference = code.reference();
            let text = [reference.meaning, reference.given_by, reference.what_to_do].join(" ");
            assert!(text.contains(words), "{code} does not mention {words}");
        }
    }

    #[test]
    fn every_code_has_its_own_text() {
        for (i, a) in ErrorCode::ALL.into_iter().enumerate() {
            for b in ErrorCode::ALL.into_iter().skip(i + 1) {
                let (a_ref, b_ref) = (a.reference(), b.reference());
                assert_ne!(a_ref.meaning, b_ref.meaning, "{a} and {b}");
                assert_ne!(a_ref.given_by, b_ref.given_by, "{a} and {b}");
                assert_ne!(a_ref.what_to_do, b_ref.what_to_do, "{a} and {b}");
            }
        }
    }
}
