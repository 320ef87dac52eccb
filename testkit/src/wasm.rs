//! `MemoryBackend` for JavaScript: `fetch(request)` answers a `Request` with
//! a `Response`, which is what `new Host({apiBase, backend})` takes.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Promise, Reflect};
use serde::Serialize;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{JsFuture, future_to_promise};
use web_sys::{Headers, ResponseInit};

use crate::Error;
use crate::backend::{self, Started, Upstream};

mod upstream;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
/** An amount written as a decimal string, so that it stays exact: "89.50", "0.25". */
export type DecimalString = string;

/** A role token. */
export type FixtureRole = "super_user" | "admin" | "office" | "field";

/** A unit token. */
export type FixtureUnit = "T_ITEM" | "T_SQUARE_METRE" | "T_LINEAR_METRE";

/** A tool's install settings: setting keys to strings, numbers and booleans. */
export type FixtureSettings = Record<string, string | number | boolean>;

/**
 * The data a test host starts from. Every field is optional; a row without an `id` gets one.
 * A mistake throws an Error naming its path (`products[2].sellPrice: must be a decimal string…`).
 */
export interface TestFixtures {
  /** The signed-in user (default: "Test User", role "office", id "test-user"). `timeZone` and
   * `theme` are the user's own choices, which win over the organisation's. */
  user?: {
    /** The user's id: an identity token's `sub`. */
    id?: string;
    name?: string;
    email?: string;
    role?: FixtureRole;
    timeZone?: string;
    theme?: "light" | "dark";
  };
  /** The organisation (default: "Test Tenant", en-NZ, tax rate "0.15", references from Q-1). */
  tenant?: {
    id?: string;
    name?: string;
    cultureCode?: string;
    /** The default tax rate of new quote lines, a fraction from "0" to "1". */
    taxRate?: DecimalString;
    /** The last number used for generated references: the next quote is Q-<n+1>. */
    quoteSequence?: number;
    /** Beyond 2.1.0, in `context.get()` when given: an IANA time zone such as "Pacific/Auckland". */
    timeZone?: string;
    /** An ISO 4217 currency code in capitals, such as "NZD". */
    currency?: string;
    units?: "metric" | "imperial";
    theme?: "light" | "dark";
  };
  customers?: { id?: string; name: string; email?: string; phone?: string }[];
  taskTemplates?: {
    id?: string;
    code: string;
    name: string;
    unitPrice: DecimalString;
    /** Default: the unit price. */
    costPrice?: DecimalString;
    active?: boolean;
  }[];
  products?: {
    id?: string;
    sku: string;
    name: string;
    /** Default "T_ITEM". */
    unit?: FixtureUnit;
    sellPrice: DecimalString;
    /** Default: the sell price. */
    costPrice?: DecimalString;
    active?: boolean;
    /** The task lines the host adds after a line of this product: a template's code and the
     * task quantity per unit of the product. */
    taskSequence?: { taskTemplate: string; qtyPerUnit: DecimalString }[];
  }[];
  costItems?: { id?: string; code: string; name: string; type?: string; active?: boolean }[];
  jobs?: { id?: string; ref: string; customerId: string; status?: string; closed?: boolean }[];
  quotes?: {
    id?: string;
    /** Default: the next Q-<n>. */
    ref?: string;
    customerId: string;
    jobId?: string;
    title?: string;
    type?: "Quote" | "Estimate";
    status?: "Draft" | "Sent" | "Accepted" | "Rejected" | "Expired";
    /** "2025-01-31" or "2025-01-31T09:30:00Z"; default now. */
    date?: string;
    expiryDays?: number;
    lines?: {
      lineNo?: number;
      lineType?: "product" | "task" | "cost";
      linkedItemId?: string;
      productCode?: string;
      description: string;
      specification?: string;
      location?: string;
      qty: DecimalString;
      unit?: FixtureUnit;
      unitPrice: DecimalString;
      costPrice?: DecimalString;
      taxRate?: DecimalString;
      section?: string;
      groupId?: number;
      injected?: boolean;
      parentLineNo?: number;
    }[];
    groupKeys?: Record<string, number>;
  }[];
  /** The id or reference of the quote open in the editor; none when absent. */
  openQuote?: string | null;
  /** The tool's manifest.json. Its `settings` declarations check `settings`; with it, the tool
   * is offered settings even without any. Its `permissions.identity` lets the tool have identity
   * tokens (the test host mounts it so), its `permissions.connect` lists the origins
   * `bridge.fetch` may reach, and its `version` is the tokens' `ver` (default "0.0.0"). Without
   * a manifest, the tool gets neither tokens nor fetches. */
  manifest?: {
    settings?: unknown[];
    version?: string;
    permissions?: { connect?: string[]; identity?: boolean };
    [field: string]: unknown;
  };
  /** The tool's install settings as an admin saved them: with `manifest`, checked against its
   * declarations and laid over their defaults, and the values of settings declared
   * `"secret": true` kept apart (never in `settings.get`, only in the placeholders of
   * `bridge.fetch`); without, exactly what `settings.get` answers. Neither: the tool is offered
   * no settings. */
  settings?: FixtureSettings;
  /** Who issues identity tokens and for whom (default: the test page's origin for both). */
  token?: {
    /** The app's public URL, the tokens' `iss`, e.g. "https://app.example.com". */
    issuer?: string;
    /** The tool's origin, the tokens' `aud`, e.g. "https://prices.tools.example.com". */
    audience?: string;
  };
}

/** A customer as the backend holds it. */
export interface BackendCustomer {
  id: string;
  name: string;
  email: string;
  phone: string;
}

/** The signed-in user, as `context.get()` answers. */
export interface BackendUser {
  userName: string;
  userEmail: string;
  userRole: FixtureRole;
  tenantName: string;
  tenantId: string;
  cultureCode: string;
  /** Beyond 2.1.0: the context in effect for the user (the tenant's, with the user's own time
   * zone and theme over it), each where the fixtures give it; `locale` is the culture code. */
  timeZone?: string;
  locale?: string;
  currency?: string;
  units?: "metric" | "imperial";
  theme?: "light" | "dark";
}

/** A quote as the backend holds it (`GET /quotes/{id}`). */
export interface BackendQuote {
  id: string;
  ref: string;
  customerId: string;
  customerName: string;
  jobId?: string;
  title?: string;
  quoteType: "Quote" | "Estimate";
  status: "Draft" | "Sent" | "Accepted" | "Rejected" | "Expired";
  date: string;
  expiryDays: number;
  lines: {
    lineNo: number;
    lineType: "product" | "task" | "cost";
    linkedItemId?: string;
    productCode?: string;
    description: string;
    specification?: string;
    location?: string;
    qty: number;
    unit: FixtureUnit;
    unitPrice: number;
    costPrice: number;
    taxRate: number;
    section?: string;
    groupId: number;
    injected: boolean;
    parentLineNo?: number;
    nett: number;
    tax: number;
    total: number;
    cost: number;
  }[];
  groupKeys: Record<string, number>;
  totals: { cost: number; margin: number; marginPercent: number; nett: number; tax: number; total: number };
}

/** What the fixtures' manifest asks for. */
export interface BackendPermissions {
  /** The origins the tool may fetch from. */
  connect: string[];
  /** Whether the tool gets identity tokens. */
  identity: boolean;
}

/** The public keys that verify identity tokens, as the platform's `/.well-known/jwks.json`
 * answers them (a JSON Web Key Set of P-256 keys). */
export interface JsonWebKeySet {
  keys: { kty: "EC"; crv: "P-256"; x: string; y: string; kid: string; alg: "ES256"; use: "sig" }[];
}

/** An identity token as the platform answers it: the compact JWS, its `exp` in Unix seconds,
 * and its lifetime in seconds. */
export interface IssuedToken {
  token: string;
  expiresAt: number;
  expiresIn: number;
}

/** What the fetch handler is told besides the request. */
export interface FetchInfo {
  /** The slug of the tool that called `bridge.fetch`. */
  tool: string;
}

/**
 * Answers a tool's `bridge.fetch` in place of the outside server: `request` is what the platform's
 * server would send there, its placeholders (`{{secret.NAME}}`, `{{token}}`, `{{base64:…}}`)
 * replaced. Answer a `Response` (`Response.json(…)`, `new Response(bytes, {status, headers})`)
 * within 15 seconds.
 */
export type FetchHandler = (request: Request, info: FetchInfo) => Response | Promise<Response>;

/** A request the backend answered: the path is below the API base, with its query. */
export interface BackendRequest {
  method: string;
  path: string;
  status: number;
}
"#;

/// A JSON value in JavaScript form.
fn to_js<T: Serialize>(value: &T) -> JsValue {
    serde_json::to_string(value)
        .ok()
        .and_then(|text| js_sys::JSON::parse(&text).ok())
        .unwrap_or(JsValue::NULL)
}

/// An `Error` with `message`, and `errors` when there are violations.
fn error(message: &str, errors: Option<JsValue>) -> JsValue {
    let error = js_sys::Error::new(message);
    if let Some(errors) = errors {
        let _ = Reflect::set(&error, &JsValue::from_str("errors"), &errors);
    }
    error.into()
}

/// The tenant's data in memory, answering the host module's REST requests
/// with the platform's rules. Pass it to `new Host({apiBase, backend})`.
#[wasm_bindgen]
pub struct MemoryBackend {
    core: Rc<RefCell<backend::MemoryBackend>>,
    /// The API base's path (`/api/v1`): requests are routed on what follows.
    base_path: String,
    /// The test's fetch handler (`onFetch`), which answers the requests a tool makes with
    /// `bridge.fetch`.
    on_fetch: Rc<RefCell<Option<js_sys::Function>>>,
}

#[wasm_bindgen]
impl MemoryBackend {
    /// A backend holding `fixtures`, answering requests under `apiBase` (a
    /// URL or a path on the page's origin, `/api/v1` when omitted). Throws
    /// an `Error` listing every problem with its path (also as `errors`:
    /// `[{path, message}]`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "TestFixtures")] fixtures: &JsValue,
        #[wasm_bindgen(js_name = apiBase)] api_base: Option<String>,
    ) -> Result<MemoryBackend, JsValue> {
        let text = if fixtures.is_undefined() || fixtures.is_null() {
            "{}".to_owned()
        } else {
            js_sys::JSON::stringify(fixtures)
                .ok()
                .and_then(|text| text.as_string())
                .ok_or_else(|| error("fixtures must be plain JSON data", None))?
        };
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| error(&format!("fixtures must be plain JSON data ({e})"), None))?;
        let page_origin = web_sys::window()
            .and_then(|window| window.location().origin().ok())
            .unwrap_or_else(|| backend::DEFAULT_PAGE_ORIGIN.to_owned());
        let core = backend::MemoryBackend::on_page(&value, &page_origin).map_err(|e| match e {
            Error::Fixtures(violations) => {
                let lines: Vec<String> = violations.iter().map(ToString::to_string).collect();
                error(
                    &format!("the fixtures are not valid:\n  {}", lines.join("\n  ")),
                    Some(to_js(&violations)),
                )
            }
            Error::Setup(_) => error(&e.to_string(), None),
        })?;
        let base = api_base.unwrap_or_else(|| "/api/v1".to_owned());
        let base_path = web_sys::window()
            .and_then(|window| window.location().href().ok())
            .and_then(|page| web_sys::Url::new_with_base(&base, &page).ok())
            .map_or(base, |url| url.pathname());
        Ok(MemoryBackend {
            core: Rc::new(RefCell::new(core)),
            base_path: base_path.trim_end_matches('/').to_owned(),
            on_fetch: Rc::new(RefCell::new(None)),
        })
    }

    /// Answers `request` as the platform's REST API would.
    #[wasm_bindgen(unchecked_return_type = "Promise<Response>")]
    pub fn fetch(&self, request: web_sys::Request) -> Promise {
        let core = Rc::clone(&self.core);
        let on_fetch = Rc::clone(&self.on_fetch);
        let base_path = self.base_path.clone();
        future_to_promise(async move {
            let url = web_sys::Url::new(&request.url())
                .map_err(|_| error("fetch: the request's URL cannot be read", None))?;
            let path = url.pathname();
            let below = path
                .strip_prefix(&base_path)
                .filter(|rest| rest.is_empty() || rest.starts_with('/'))
                .unwrap_or(&path);
            let target = format!("{below}{}", url.search());
            let method = request.method();
            let mut headers = Vec::new();
            for name in ["content-type", "if-none-match", "if-match"] {
                if let Ok(Some(value)) = request.headers().get(name) {
                    headers.push((name.to_owned(), value));
                }
            }
            let body = if method == "GET" || method == "HEAD" {
                None
            } else {
                let text = request
                    .text()
                    .map_err(|_| error("fetch: the request's body cannot be read", None))?;
                JsFuture::from(text).await?.as_string()
            };
            let started = core.borrow_mut().start(&backend::Request {
                method: &method,
                target: &target,
                headers: &headers,
                body: body.as_deref(),
            });
            let answer = match started {
                Started::Answered(answer) => answer,
                Started::Fetch(pending) => {
                    // The handler is taken now: one registered while the request waits counts
                    // from the next request on.
                    let handler = on_fetch.borrow().clone();
                    let upstream = match handler {
                        Some(handler) => upstream::ask(&handler, &pending.outgoing).await,
                        None => Upstream::NoHandler,
                    };
                    core.borrow_mut().finish(pending, upstream)
                }
            };
            response(&answer).map(JsValue::from)
        })
    }

    /// Registers the handler that answers the requests tools make with `bridge.fetch`, in place
    /// of the outside server the platform's server would ask (`null` removes it). The backend
    /// first does what the server does: it checks the request, refuses an origin the fixtures'
    /// manifest does not list in `permissions.connect`, and replaces the placeholders
    /// (`{{secret.NAME}}` with the secret settings of the fixtures, `{{token}}` with an identity
    /// token, `{{base64:…}}`). The handler gets the request that results as a standard `Request`,
    /// and the tool's slug as `info.tool`; it answers a `Response` (or a promise of one) within
    /// 15 seconds. A handler that throws, rejects or answers no `Response` gives the tool
    /// `BACKEND_UNAVAILABLE`, one that takes longer `TIMEOUT`. Without a handler, the tool's
    /// fetch fails with an `INTERNAL` error that says to register one.
    #[wasm_bindgen(js_name = onFetch)]
    pub fn on_fetch(
        &self,
        #[wasm_bindgen(unchecked_param_type = "FetchHandler | null")] handler: &JsValue,
    ) -> Result<(), JsValue> {
        let handler = if handler.is_null() || handler.is_undefined() {
            None
        } else {
            Some(handler.dyn_ref::<js_sys::Function>().cloned().ok_or_else(|| {
                error(
                    "onFetch: give a function, (request, info) => Response | Promise<Response>, or null",
                    None,
                )
            })?)
        };
        *self.on_fetch.borrow_mut() = handler;
        Ok(())
    }

    /// Every quote (created ones too), in the order they were made, each as
    /// `GET /quotes/{id}` answers it.
    #[wasm_bindgen(getter, unchecked_return_type = "BackendQuote[]")]
    pub fn quotes(&self) -> JsValue {
        to_js(&self.core.borrow().quotes())
    }

    /// Every customer (created ones too), in the order they were made.
    #[wasm_bindgen(getter, unchecked_return_type = "BackendCustomer[]")]
    pub fn customers(&self) -> JsValue {
        to_js(&self.core.borrow().customers())
    }

    /// The signed-in user, as `context.get()` reads it.
    #[wasm_bindgen(getter, unchecked_return_type = "BackendUser")]
    pub fn user(&self) -> JsValue {
        to_js(self.core.borrow().user())
    }

    /// The id of the quote the fixtures name in `openQuote`, or `null`.
    #[wasm_bindgen(getter = openQuoteId)]
    pub fn open_quote_id(&self) -> Option<String> {
        self.core.borrow().open_quote_id().map(str::to_owned)
    }

    /// What the fixtures' `manifest` asks for, `{connect, identity}`, or `null` without a
    /// manifest. The test host mounts tools with its `identity`.
    #[wasm_bindgen(getter, unchecked_return_type = "BackendPermissions | null")]
    pub fn permissions(&self) -> JsValue {
        self.core
            .borrow()
            .permissions()
            .map_or(JsValue::NULL, |permissions| {
                to_js(&serde_json::json!({
                    "connect": permissions.connect,
                    "identity": permissions.identity,
                }))
            })
    }

    /// The keys of the secret settings that have a value; never their values, which only the
    /// fetch stand-in reads.
    #[wasm_bindgen(getter = secretKeys, unchecked_return_type = "string[]")]
    pub fn secret_keys(&self) -> JsValue {
        to_js(&self.core.borrow().secret_keys())
    }

    /// The install settings the tool sees (the fixtures', or those an admin saved since with
    /// `installSettings`), never a secret one; or `null`.
    #[wasm_bindgen(getter, unchecked_return_type = "FixtureSettings | null")]
    pub fn settings(&self) -> JsValue {
        self.core.borrow().settings().map_or(JsValue::NULL, to_js)
    }

    /// An admin saves `values` as the tool's install settings; answers what the tool now sees:
    /// checked against the settings the fixtures' `manifest` declares and laid over their
    /// defaults (without a manifest, the values as they are). A secret setting's value is kept
    /// for the fetch stand-in and left out of the answer (left out, it keeps its value; `null`
    /// or `""` clears it). Throws an `Error` naming each refused key (also as `errors`: `[{path,
    /// message}]`), and then nothing changes.
    #[wasm_bindgen(js_name = installSettings, unchecked_return_type = "FixtureSettings")]
    pub fn install_settings(
        &self,
        #[wasm_bindgen(unchecked_param_type = "FixtureSettings")] values: &JsValue,
    ) -> Result<JsValue, JsValue> {
        let value = js_sys::JSON::stringify(values)
            .ok()
            .and_then(|text| text.as_string())
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(serde_json::Value::Null);
        self.core
            .borrow_mut()
            .install_settings(&value)
            .map(|settings| to_js(&settings))
            .map_err(|refused| {
                let lines: Vec<String> =
                    refused.details().iter().map(ToString::to_string).collect();
                error(
                    &format!("the settings are not valid:\n  {}", lines.join("\n  ")),
                    Some(to_js(&refused.details())),
                )
            })
    }

    /// Every request answered so far: `{method, path, status}`, the path
    /// below the API base with its query.
    #[wasm_bindgen(getter, unchecked_return_type = "BackendRequest[]")]
    pub fn requests(&self) -> JsValue {
        to_js(&self.core.borrow().requests())
    }

    /// The public keys that verify this backend's identity tokens, shaped as
    /// the platform's `/.well-known/jwks.json`: `{keys: [{kty, crv, x, y, kid,
    /// alg, use}]}`. The key is made with the backend and lives only in this
    /// page: no server trusts it.
    #[wasm_bindgen(unchecked_return_type = "JsonWebKeySet")]
    pub fn jwks(&self) -> JsValue {
        to_js(&self.core.borrow().jwks())
    }

    /// An identity token for tool `slug` (default `"tool"`), as the tool's
    /// `bridge.auth.getToken()` would get it: `{token, expiresAt, expiresIn}`.
    /// Throws an `Error` with the `code` the platform answers (`NOT_ALLOWED`
    /// when the fixtures' manifest does not ask for `permissions.identity`).
    #[wasm_bindgen(js_name = issueToken, unchecked_return_type = "IssuedToken")]
    pub fn issue_token(&self, slug: Option<String>) -> Result<JsValue, JsValue> {
        let slug = slug.unwrap_or_else(|| "tool".to_owned());
        self.core
            .borrow()
            .identity_token(&slug)
            .map(|token| to_js(&token))
            .map_err(|refused| {
                let thrown = error(&format!("issueToken: {refused}"), None);
                let _ = Reflect::set(
                    &thrown,
                    &JsValue::from_str("code"),
                    &JsValue::from_str(refused.code().as_str()),
                );
                thrown
            })
    }

    /// Holds the backend's clock at `unixSeconds` (whole seconds since 1970),
    /// or lets it follow the system's clock again with `null`. Identity
    /// tokens are issued at it: with a moment more than 300 seconds ago, the
    /// next token has already expired. New quotes are dated by it too.
    #[wasm_bindgen(js_name = setNow)]
    pub fn set_now(
        &self,
        #[wasm_bindgen(js_name = unixSeconds)] unix_seconds: Option<f64>,
    ) -> Result<(), JsValue> {
        let seconds = match unix_seconds {
            None => None,
            Some(seconds)
                if seconds.is_finite()
                    && seconds >= 0.0
                    && seconds.fract() == 0.0
                    && seconds <= 9_007_199_254_740_991.0 =>
            {
                // A whole number within 2^53: exact as a u64.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                Some(seconds as u64)
            }
            Some(other) => {
                return Err(error(
                    &format!(
                        "setNow: give whole seconds since 1970 (Math.floor(Date.now() / 1000)), or null for the system's clock (got {other})"
                    ),
                    None,
                ));
            }
        };
        self.core.borrow_mut().set_now(seconds);
        Ok(())
    }

    /// Now on the backend's clock, in whole seconds since 1970.
    #[wasm_bindgen(getter)]
    pub fn now(&self) -> f64 {
        // Seconds since 1970 stay far below 2^53.
        #[allow(clippy::cast_precision_loss)]
        let now = self.core.borrow().now() as f64;
        now
    }

    /// Ends the session: every request answers `401 UNAUTHENTICATED` from now
    /// on, as the platform does once the user signs out.
    #[wasm_bindgen(js_name = signOut)]
    pub fn sign_out(&self) {
        self.core.borrow_mut().sign_out();
    }
}

/// The `Response` for an answer.
fn response(answer: &backend::Response) -> Result<web_sys::Response, JsValue> {
    let headers = Headers::new()?;
    for (name, value) in &answer.headers {
        headers.set(name, value)?;
    }
    let init = ResponseInit::new();
    init.set_status(answer.status);
    init.set_headers(&headers);
    web_sys::Response::new_with_opt_str_and_init(answer.body.as_deref(), &init)
}
