//! `MemoryBackend` for JavaScript: `fetch(request)` answers a `Request` with
//! a `Response`, which is what `new Host({apiBase, backend})` takes.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Promise, Reflect};
use serde::Serialize;
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen_futures::{JsFuture, future_to_promise};
use web_sys::{Headers, ResponseInit};

use crate::backend;

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
  /** The signed-in user (default: "Test User", role "office"). */
  user?: { name?: string; email?: string; role?: FixtureRole };
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
  /** The tool's manifest.json (only its `settings` declarations are read). With it, `settings`
   * are an admin's values: checked against the declarations as the platform checks them and
   * laid over the declared defaults, and the tool is offered settings even without any. */
  manifest?: { settings?: unknown[]; [field: string]: unknown };
  /** The tool's install settings, which `settings.get` answers: an admin's values over the
   * manifest's defaults when `manifest` is given, else exactly these. Neither: the tool is
   * offered no settings. */
  settings?: FixtureSettings;
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
  timeZone?: string;
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
        let core = backend::MemoryBackend::new(&value).map_err(|e| {
            let lines: Vec<String> = e.violations().iter().map(ToString::to_string).collect();
            error(
                &format!("the fixtures are not valid:\n  {}", lines.join("\n  ")),
                Some(to_js(&e.violations())),
            )
        })?;
        let base = api_base.unwrap_or_else(|| "/api/v1".to_owned());
        let base_path = web_sys::window()
            .and_then(|window| window.location().href().ok())
            .and_then(|page| web_sys::Url::new_with_base(&base, &page).ok())
            .map_or(base, |url| url.pathname());
        Ok(MemoryBackend {
            core: Rc::new(RefCell::new(core)),
            base_path: base_path.trim_end_matches('/').to_owned(),
        })
    }

    /// Answers `request` as the platform's REST API would.
    #[wasm_bindgen(unchecked_return_type = "Promise<Response>")]
    pub fn fetch(&self, request: web_sys::Request) -> Promise {
        let core = Rc::clone(&self.core);
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
            for name in ["content-type", "if-none-match"] {
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
            let answer = core.borrow_mut().handle(&backend::Request {
                method: &method,
                target: &target,
                headers: &headers,
                body: body.as_deref(),
            });
            response(&answer).map(JsValue::from)
        })
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

    /// The install settings the fixtures give, or `null`.
    #[wasm_bindgen(getter, unchecked_return_type = "FixtureSettings | null")]
    pub fn settings(&self) -> JsValue {
        self.core.borrow().settings().map_or(JsValue::NULL, to_js)
    }

    /// The install settings the tool sees for an admin's `values`: checked
    /// against the settings the fixtures' `manifest` declares and laid over
    /// their defaults (without a manifest, the values as they are). Throws an
    /// `Error` naming each refused key (also as `errors`: `[{path, message}]`).
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
            .borrow()
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
