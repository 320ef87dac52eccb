//! `Host`: the page's handle on toolbridge. It owns the state every part of
//! the module shares ([`Shared`]) and exposes the page API: mount tools,
//! open, read, save, send and close the quote in the editor, listen for
//! changes, calls and connectivity, and switch debug logging.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Function, Promise};
use serde::Deserialize;
use toolbridge_protocol::catalog::{self, Catalog, CatalogIndex};
use toolbridge_protocol::context::{BridgeContextDto, ContextValues};
use toolbridge_protocol::manifest::{SLUG_RULE, is_tool_slug};
use toolbridge_protocol::money::decimal_from_f64;
use toolbridge_protocol::notification::SessionEndReason;
use toolbridge_protocol::open_quote::{LineEdit, OpenQuote};
use toolbridge_protocol::quote::QuoteDto;
use toolbridge_protocol::{Error, limits};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::future_to_promise;
use web_sys::{Element, HtmlIFrameElement, MessageEvent, Window};

use crate::backend::{Backend, Fetched, Tagged};
use crate::connectivity::{self, Reachability, Watch};
use crate::context::PageContext;
use crate::debug::{AddLinesPhases, DebugLog, OpenQuotePhases};
use crate::dispatch::{fetch_context, typed};
use crate::editor::{Change, Editor, QuoteView, Session, Unsaved, fingerprint, fingerprint_of};
use crate::error::HostError;
use crate::handshake;
use crate::hooks::Hooks;
use crate::json;
use crate::listeners::Listeners;
use crate::options::{HostOptions, ToolOptions, read_settings};
use crate::registry::{MountedTool, Registry, SANDBOX};

/// The catalog index with the `ETag` it came with.
struct CachedCatalog {
    etag: String,
    catalog: Rc<Catalog>,
}

/// State shared by the page API, the handshake and call dispatch.
pub(crate) struct Shared {
    pub(crate) window: Window,
    pub(crate) backend: Backend,
    pub(crate) tools: RefCell<Registry>,
    pub(crate) editor: RefCell<Editor>,
    pub(crate) debug: DebugLog,
    /// The signed-in user, also in the JavaScript form `context.get` answers.
    context: RefCell<Option<(BridgeContextDto, JsValue)>>,
    performance: Option<web_sys::Performance>,
    catalog: RefCell<Option<CachedCatalog>>,
    changes: Rc<Listeners>,
    /// The page's hooks for the `ui.*` extensions.
    pub(crate) hooks: Hooks,
    /// The context the page gave with `setContext`.
    pub(crate) page_context: PageContext,
    /// Whether the server can be reached (the backend's too).
    pub(crate) reach: Rc<Reachability>,
    /// The checks while offline, and who hears of each change.
    pub(crate) connectivity: Watch,
    /// Whether tools were told the session ended (told once, until a user
    /// is known again).
    pub(crate) session_ended: std::cell::Cell<bool>,
    /// Where the last `quotes.addLines` spent its time, for the bench.
    pub(crate) add_lines_phases: std::cell::Cell<AddLinesPhases>,
    /// Where the last `openQuote` spent its time, for the bench.
    open_quote_phases: std::cell::Cell<OpenQuotePhases>,
}

impl Shared {
    /// Milliseconds on the page's high-resolution clock.
    pub(crate) fn now(&self) -> f64 {
        self.performance
            .as_ref()
            .map_or(0.0, web_sys::Performance::now)
    }

    /// The signed-in user (`GET /me`, fetched once and kept).
    pub(crate) async fn context(&self) -> Result<BridgeContextDto, Error> {
        if let Some((context, _)) = self.context.borrow().as_ref() {
            return Ok(context.clone());
        }
        let mut context = fetch_context(self).await?;
        self.page_context.apply_to(&mut context.values);
        let js = json::to_js(&context)?;
        *self.context.borrow_mut() = Some((context.clone(), js));
        self.session_ended.set(false);
        Ok(context)
    }

    /// The kept user's context beyond 2.1.0, when known.
    pub(crate) fn kept_values(&self) -> Option<ContextValues> {
        self.context
            .borrow()
            .as_ref()
            .map(|(context, _)| context.values.clone())
    }

    /// Sets the page's context over the kept user's, when there is one.
    pub(crate) fn reapply_page_context(&self) -> Result<(), Error> {
        let mut kept = self.context.borrow_mut();
        if let Some((context, js)) = kept.as_mut() {
            self.page_context.apply_to(&mut context.values);
            *js = json::to_js(&*context)?;
        }
        Ok(())
    }

    /// The kept user as `context.get` answers it, when known.
    pub(crate) fn context_js(&self) -> Option<JsValue> {
        self.context.borrow().as_ref().map(|(_, js)| js.clone())
    }

    /// Drops the kept user, after the backend said the session ended.
    pub(crate) fn forget_context(&self) {
        self.context.borrow_mut().take();
    }

    /// Whether the page listens for changes with `onChange`.
    pub(crate) fn has_change_listeners(&self) -> bool {
        !self.changes.is_empty()
    }

    /// Tells the page's `onChange` listeners of `change`, with the open
    /// quote after it (`view`).
    pub(crate) fn tell_change_listeners(&self, view: Option<&QuoteView>, change: &Change) {
        if self.changes.is_empty() {
            return;
        }
        let quote = view
            .and_then(|view| json::to_js(view).ok())
            .unwrap_or(JsValue::NULL);
        let change = json::to_js(change).unwrap_or(JsValue::NULL);
        self.changes.emit(&quote, &change);
    }

    /// Unmounts a tool: its port closes, its frame leaves the page.
    pub(crate) fn unmount(&self, key: u32) {
        let removed = self.tools.borrow_mut().remove(key);
        if let Some(mounted) = removed {
            mounted.frame.remove();
        }
    }

    /// The catalog index, revalidated with its `ETag`; what each step took
    /// goes into `phases`.
    async fn catalog(&self, phases: &mut OpenQuotePhases) -> Result<Rc<Catalog>, Error> {
        let etag = self.catalog.borrow().as_ref().map(|c| c.etag.clone());
        let started = self.now();
        let fetched = self
            .backend
            .get_if_changed("/catalog/index", etag.as_deref())
            .await?;
        let fetched_at = self.now();
        phases.index_fetch_ms = fetched_at - started;
        match fetched {
            Fetched::NotModified => self
                .catalog
                .borrow()
                .as_ref()
                .map(|cached| Rc::clone(&cached.catalog))
                .ok_or_else(|| {
                    Error::Internal(
                        "the backend answered 304 for a catalog index the host never had"
                            .to_owned(),
                    )
                }),
            Fetched::Fresh { bytes, etag } => {
                let index = read_index(&bytes)?;
                let parsed_at = self.now();
                phases.index_parse_ms = parsed_at - fetched_at;
                let catalog = Rc::new(Catalog::from_index(index)?);
                phases.index_build_ms = self.now() - parsed_at;
                *self.catalog.borrow_mut() = etag.map(|etag| CachedCatalog {
                    etag,
                    catalog: Rc::clone(&catalog),
                });
                Ok(catalog)
            }
        }
    }

    fn current_view(&self) -> Result<JsValue, HostError> {
        let view = self.editor.borrow().view();
        Ok(json::to_js(&view)?)
    }

    async fn open_quote(
        self: Rc<Self>,
        id: String,
        options: OpenOptions,
    ) -> Result<JsValue, HostError> {
        if id.trim().is_empty() || id.chars().count() > limits::TEXT_MAX_CHARS {
            return Err(HostError::usage(format!(
                "openQuote: {id:?} is not a quote id"
            )));
        }
        if let Some(kept) = &options.restore {
            if kept.quote_id != id {
                return Err(HostError::usage(format!(
                    "openQuote: the unsaved changes given in `restore` are of quote {:?}, not {id:?}",
                    kept.quote_id
                )));
            }
        }
        self.refuse_if_unsaved("openQuote")?;
        let generation = self.editor.borrow_mut().begin();
        let mut phases = OpenQuotePhases::default();
        let started = self.now();
        let context = self.context().await;
        let context = self.unauthenticated_forgets(context)?;
        let context_at = self.now();
        phases.context_ms = context_at - started;
        let path = quote_path(&id, "");
        let quote = self.backend.get_tagged(&path).await;
        let Tagged { body, etag } = self.unauthenticated_forgets(quote)?;
        let dto: QuoteDto = typed(body, &format!("GET {path}"))?;
        let quote_at = self.now();
        phases.quote_ms = quote_at - context_at;
        let catalog = self.catalog(&mut phases).await;
        let catalog = self.unauthenticated_forgets(catalog)?;
        let catalog_at = self.now();
        let restored = match options.restore {
            Some(kept) => Session::restored(
                &dto,
                Rc::clone(&catalog),
                context.user_role,
                etag.as_deref(),
                kept,
            )?,
            None => None,
        };
        let session = match restored {
            Some(session) => session,
            None => Session::new(OpenQuote::from_dto(dto)?, catalog, context.user_role, etag),
        };
        {
            let mut editor = self.editor.borrow_mut();
            if !editor.is_current(generation) {
                return Err(HostError::usage(format!(
                    "openQuote({id:?}) was overtaken by a later openQuote or closeQuote"
                )));
            }
            editor.install(session);
        }
        self.abandon_quote_dialogs();
        self.emit_change(&Change::Opened);
        let view = self.current_view();
        phases.install_ms = self.now() - catalog_at;
        self.open_quote_phases.set(phases);
        view
    }

    async fn save(self: Rc<Self>, options: SaveOptions) -> Result<JsValue, HostError> {
        self.save_open("save", options.overwrite).await?;
        self.emit_change(&Change::Saved);
        self.current_view()
    }

    /// Saves the open quote's lines; returns the quote's id.
    ///
    /// The save is made against the version the host last had of the quote
    /// (`If-Match` with its `ETag`), unless `overwrite`, and carries the
    /// `Idempotency-Key` of its revision, the same for every attempt at the
    /// same changes. Should the server have moved on, the save is refused
    /// with `CONFLICT` and the open quote is left as it is, unless the newer
    /// version has the lines this host's changes were made on (another
    /// change touched only the header, which a save of the lines keeps) or
    /// exactly what an earlier save of this host's sent (its answer was
    /// lost): then it is saved against that version.
    async fn save_open(&self, what: &str, overwrite: bool) -> Result<String, HostError> {
        let attempt = self.save_attempt(what)?;
        let path = quote_path(&attempt.id, "/lines");
        let mut if_match = if overwrite {
            None
        } else {
            attempt.etag.clone()
        };
        let mut looked = false;
        let saved = loop {
            let mut headers = vec![("Idempotency-Key", attempt.key.as_str())];
            if let Some(etag) = &if_match {
                headers.push(("If-Match", etag.as_str()));
            }
            let outcome = self
                .backend
                .send_tagged("PUT", &path, Some(&attempt.body), &headers)
                .await;
            match self.unauthenticated_forgets(outcome) {
                Ok(saved) => break saved,
                Err(Error::Conflict(_)) if !looked => {
                    looked = true;
                    match self.version_to_save_over(&attempt).await? {
                        Some(etag) => if_match = Some(etag),
                        None => return Err(changed_elsewhere(what, &attempt.reference).into()),
                    }
                }
                Err(Error::Conflict(_)) => {
                    return Err(changed_elsewhere(what, &attempt.reference).into());
                }
                Err(error) => {
                    if outcome_unknown(&error) {
                        self.keep_unsettled(&attempt);
                    }
                    return Err(error.into());
                }
            }
        };
        let dto: QuoteDto = typed(saved.body, &format!("PUT {path}"))?;
        if let Some(session) = self.editor.borrow_mut().session_mut() {
            if session.quote.header().id == attempt.id {
                session.settle(attempt.revision, dto, saved.etag)?;
            }
        }
        Ok(attempt.id)
    }

    /// What a save of the open quote sends now; `what` names the operation
    /// for its refusals.
    fn save_attempt(&self, what: &str) -> Result<SaveAttempt, HostError> {
        let mut editor = self.editor.borrow_mut();
        let session = editor
            .session_mut()
            .ok_or_else(|| HostError::usage(format!("{what}: no quote is open")))?;
        let header = session.quote.header();
        if !header.status.is_editable() {
            return Err(Error::QuoteLocked(format!(
                "quote {} is {}; only a Draft quote can be saved",
                header.reference, header.status
            ))
            .into());
        }
        let (id, reference) = (header.id.clone(), header.reference.clone());
        let key = session.save_key(|| new_idempotency_key(&self.window))?;
        let (lines, group_keys) = (session.quote.lines(), session.quote.group_keys());
        Ok(SaveAttempt {
            id,
            reference,
            revision: session.revision,
            body: serde_json::json!({"lines": lines, "groupKeys": group_keys}),
            sent: fingerprint(lines, group_keys),
            key,
            etag: session.etag.clone(),
        })
    }

    /// The `ETag` of the server's version of the quote when a save of the
    /// lines may be made over it without losing anything: its lines are
    /// those this host's changes were made on (what changed is the header),
    /// or exactly what an earlier save of this host's sent whose outcome was
    /// unknown (that save landed). `None` when the lines changed elsewhere.
    async fn version_to_save_over(
        &self,
        attempt: &SaveAttempt,
    ) -> Result<Option<String>, HostError> {
        let known = self
            .editor
            .borrow()
            .session()
            .filter(|session| session.quote.header().id == attempt.id)
            .map(|session| (session.base, session.unsettled));
        let Some((base, unsettled)) = known else {
            return Ok(None);
        };
        let path = quote_path(&attempt.id, "");
        let fetched = self.backend.get_tagged(&path).await;
        let Tagged { body, etag } = self.unauthenticated_forgets(fetched)?;
        let server = fingerprint_of(&typed::<QuoteDto>(body, &format!("GET {path}"))?);
        Ok(etag.filter(|_| server == base || Some(server) == unsettled))
    }

    /// Keeps the fingerprint of what `attempt` sent, after it failed without
    /// saying whether it landed.
    fn keep_unsettled(&self, attempt: &SaveAttempt) {
        if let Some(session) = self.editor.borrow_mut().session_mut() {
            if session.quote.header().id == attempt.id {
                session.unsettled = Some(attempt.sent);
            }
        }
    }

    /// The open quote as the server has it now, the open quote untouched.
    async fn server_quote(self: Rc<Self>) -> Result<JsValue, HostError> {
        let id = self
            .editor
            .borrow()
            .session()
            .map(|session| session.quote.header().id.clone())
            .ok_or_else(|| HostError::usage("serverQuote: no quote is open"))?;
        let path = quote_path(&id, "");
        let fetched = self.backend.get(&path).await;
        let quote: QuoteDto = typed(
            self.unauthenticated_forgets(fetched)?,
            &format!("GET {path}"),
        )?;
        Ok(json::to_js(&quote)?)
    }

    async fn send(self: Rc<Self>) -> Result<JsValue, HostError> {
        let dirty = self
            .editor
            .borrow()
            .session()
            .ok_or_else(|| HostError::usage("send: no quote is open"))?
            .is_dirty();
        if dirty {
            self.save_open("send", false).await?;
        }
        let (id, reference, revision, etag) = {
            let mut editor = self.editor.borrow_mut();
            let session = editor
                .session_mut()
                .ok_or_else(|| HostError::usage("send: the quote was closed while saving"))?;
            session.sending = true;
            let header = session.quote.header();
            (
                header.id.clone(),
                header.reference.clone(),
                session.revision,
                session.etag.clone(),
            )
        };
        let path = quote_path(&id, "/send");
        // Sent only as this page last saw it: a change made elsewhere since is not sent unseen.
        let headers: Vec<(&str, &str)> = etag
            .as_deref()
            .map(|etag| ("If-Match", etag))
            .into_iter()
            .collect();
        let sent = self
            .backend
            .send_tagged("POST", &path, None, &headers)
            .await;
        let outcome = self
            .unauthenticated_forgets(sent)
            .map_err(|error| match error {
                Error::Conflict(_) => sent_elsewhere_changed(&reference),
                other => other,
            })
            .and_then(|sent| {
                typed::<QuoteDto>(sent.body, &format!("POST {path}")).map(|dto| (dto, sent.etag))
            });
        {
            let mut editor = self.editor.borrow_mut();
            if let Some(session) = editor.session_mut() {
                if session.quote.header().id == id {
                    session.sending = false;
                    if let Ok((sent, etag)) = &outcome {
                        session.settle(revision, sent.clone(), etag.clone())?;
                    }
                }
            }
        }
        outcome?;
        self.emit_change(&Change::Sent);
        self.current_view()
    }

    fn refuse_if_unsaved(&self, what: &str) -> Result<(), HostError> {
        let editor = self.editor.borrow();
        match editor.session() {
            Some(session) if session.is_dirty() => Err(HostError::UnsavedChanges(format!(
                "{what}: quote {} has unsaved changes; save it first, or close it with {{discard: true}}",
                session.quote.header().reference
            ))),
            _ => Ok(()),
        }
    }

    /// Passes a backend outcome through, first ending the session (the
    /// user forgotten, tools told) when the backend no longer accepts it.
    fn unauthenticated_forgets<T>(&self, outcome: Result<T, Error>) -> Result<T, Error> {
        if matches!(outcome, Err(Error::Unauthenticated(_))) {
            self.end_session(SessionEndReason::Expired);
        }
        outcome
    }
}

/// The catalog index from the body of `GET /catalog/index`, read straight
/// into its types by the protocol's reader of it (`catalog::read_index`):
/// for 100 000 products in the bench about as fast as `serde_json`, whose
/// text parser the module then does without.
fn read_index(bytes: &[u8]) -> Result<CatalogIndex, Error> {
    // As `Response.text()` would, a byte order mark is dropped.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    catalog::read_index(bytes, "the backend's answer to GET /catalog/index")
}

/// The path of quote `id`, and `rest` after it (`/lines`).
fn quote_path(id: &str, rest: &str) -> String {
    format!(
        "/quotes/{}{rest}",
        String::from(js_sys::encode_uri_component(id))
    )
}

/// What one save of the open quote sends.
struct SaveAttempt {
    /// The quote's id and reference.
    id: String,
    reference: String,
    /// The revision saved.
    revision: u64,
    /// The body: the lines and group keys.
    body: serde_json::Value,
    /// Their [`fingerprint`].
    sent: u64,
    /// Its `Idempotency-Key`.
    key: String,
    /// The version it is made against, as the host last had it.
    etag: Option<String>,
}

/// `CONFLICT` for `what` on quote `reference`, which the server has in a
/// version this host did not make.
fn changed_elsewhere(what: &str, reference: &str) -> Error {
    Error::Conflict(format!(
        "{what}: quote {reference} was changed on another device (or by someone else) since it \
         was opened here, so nothing was saved and the open quote keeps its changes; \
         host.serverQuote() answers the quote as the server has it now, \
         host.closeQuote({{discard: true}}) and host.openQuote(id) take that, and \
         host.save({{overwrite: true}}) saves these changes over it"
    ))
}

/// `CONFLICT` for a Send Quote refused because the quote changed elsewhere
/// after this page last saved or opened it.
fn sent_elsewhere_changed(reference: &str) -> Error {
    Error::Conflict(format!(
        "send: quote {reference} was changed on another device (or by someone else) since this \
         page last saved it, so it was not sent; host.serverQuote() answers the quote as the \
         server has it now, to look at before sending it"
    ))
}

/// Whether a save that failed with `error` may have landed all the same:
/// it failed on the network, timed out, or the backend failed.
fn outcome_unknown(error: &Error) -> bool {
    matches!(
        error,
        Error::Offline(_) | Error::BackendUnavailable(_) | Error::Timeout(_)
    )
}

/// A new `Idempotency-Key`: `save-` and 128 random bits from the browser's
/// `crypto.getRandomValues`, in hex.
fn new_idempotency_key(window: &Window) -> Result<String, Error> {
    let mut bytes = [0_u8; 16];
    window
        .crypto()
        .and_then(|crypto| crypto.get_random_values_with_u8_array(&mut bytes))
        .map_err(|_| {
            Error::Internal(
                "save: the browser's crypto.getRandomValues failed, so no Idempotency-Key could \
                 be made"
                    .to_owned(),
            )
        })?;
    Ok(bytes.iter().fold(String::from("save-"), |mut key, byte| {
        use std::fmt::Write as _;
        let _ = write!(key, "{byte:02x}");
        key
    }))
}

/// `save({overwrite?})`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SaveOptions {
    /// Save without `If-Match`: over whatever version the server has.
    #[serde(default)]
    overwrite: bool,
}

/// `openQuote(id, {restore?})`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenOptions {
    /// Unsaved changes `unsaved()` gave for this quote, to put back.
    #[serde(default)]
    restore: Option<Unsaved>,
}

/// `openQuote`'s options, read from JSON as the backend's answers are (what
/// `restore` holds is what `unsaved()` gave: it needs no path to its
/// fields, and reading its lines the same way keeps one reader of them in
/// the module).
fn read_open_options(options: &JsValue) -> Result<OpenOptions, String> {
    const WHAT: &str = "openQuote(id, options)";
    let value = json::from_js(options).ok_or_else(|| format!("{WHAT} must be plain JSON data"))?;
    serde_json::from_value(value).map_err(|error| format!("{WHAT}: {error}"))
}

/// `closeQuote({discard?})`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CloseOptions {
    #[serde(default)]
    discard: bool,
}

/// `updateLine(lineNo, {qty?, unitPrice?})`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct LineChange {
    qty: Option<f64>,
    unit_price: Option<f64>,
}

impl LineChange {
    /// The change as exact decimals; a number that is not finite is a usage
    /// error naming the field.
    fn to_edit(&self) -> Result<LineEdit, HostError> {
        let exact = |value: Option<f64>, field: &str| {
            value
                .map(|number| {
                    decimal_from_f64(number).ok_or_else(|| {
                        HostError::usage(format!("updateLine: {field} {number} is not a number"))
                    })
                })
                .transpose()
        };
        Ok(LineEdit {
            qty: exact(self.qty, "qty")?,
            unit_price: exact(self.unit_price, "unitPrice")?,
        })
    }
}

/// The host of the page's tools. See the crate documentation for a tour.
#[wasm_bindgen]
pub struct Host {
    shared: Rc<Shared>,
    on_message: Option<Closure<dyn FnMut(MessageEvent)>>,
}

#[wasm_bindgen]
impl Host {
    /// A host answering tools from the REST API at `options.apiBase`
    /// (`"/api/v1"` or an absolute URL), with the page's session; or, when
    /// `options.backend` is given, from its `fetch(request)`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "HostOptions")] options: &JsValue,
    ) -> Result<Host, JsValue> {
        let options = HostOptions::read(options)?;
        let window = web_sys::window().ok_or_else(|| HostError::usage("a Host needs a window"))?;
        let page = window
            .location()
            .href()
            .map_err(|_| HostError::usage("the page's URL cannot be read"))?;
        let reach = Rc::new(Reachability::new(connectivity::browser_online(&window)));
        let backend = Backend::new(
            &options.api_base,
            &page,
            options.request_timeout_ms,
            options.backend,
            Rc::clone(&reach),
        )?;
        let shared = Rc::new(Shared {
            performance: window.performance(),
            window: window.clone(),
            backend,
            tools: RefCell::default(),
            editor: RefCell::default(),
            debug: DebugLog::default(),
            context: RefCell::default(),
            catalog: RefCell::default(),
            changes: Rc::default(),
            hooks: Hooks::default(),
            page_context: PageContext::default(),
            reach,
            connectivity: Watch::new(options.connectivity_check_ms),
            session_ended: std::cell::Cell::new(false),
            add_lines_phases: std::cell::Cell::default(),
            open_quote_phases: std::cell::Cell::default(),
        });
        shared.debug.set_enabled(options.debug);
        let weak = Rc::downgrade(&shared);
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            if let Some(shared) = weak.upgrade() {
                handshake::on_window_message(&shared, &event);
            }
        });
        window
            .add_event_listener_with_callback("message", on_message.as_ref().unchecked_ref())
            .map_err(|_| HostError::usage("cannot listen for window messages"))?;
        connectivity::start(&shared);
        Ok(Host {
            shared,
            on_message: Some(on_message),
        })
    }

    /// The REST API base the host calls, as an absolute URL.
    #[wasm_bindgen(getter = apiBase)]
    pub fn api_base(&self) -> String {
        self.shared.backend.base().to_owned()
    }

    /// Creates the tool's sandboxed iframe in `container` and registers it:
    /// only that frame, showing a page from `tool.origin`, can connect, and
    /// it gets the permissions of `tool.type`.
    pub fn mount(
        &self,
        container: &Element,
        #[wasm_bindgen(unchecked_param_type = "ToolOptions")] tool: &JsValue,
    ) -> Result<MountedTool, JsValue> {
        let tool = ToolOptions::read(tool)?;
        let document = self
            .shared
            .window
            .document()
            .ok_or_else(|| HostError::usage("mount: the page has no document"))?;
        let frame: HtmlIFrameElement = document
            .create_element("iframe")
            .ok()
            .and_then(|element| element.dyn_into().ok())
            .ok_or_else(|| HostError::usage("mount: cannot create an iframe"))?;
        let attributes = [
            ("sandbox", SANDBOX),
            ("title", tool.title.as_str()),
            ("referrerpolicy", "strict-origin"),
            ("data-toolbridge-tool", tool.slug.as_str()),
        ];
        for (name, value) in attributes {
            frame
                .set_attribute(name, value)
                .map_err(|_| HostError::usage(format!("mount: cannot set the frame's {name}")))?;
        }
        if let Some(bounds) = tool.auto_resize {
            crate::tool_events::set_frame_height(&frame, bounds.min());
        }
        // Registered before the page loads, so that its first hello counts.
        let key = self
            .shared
            .tools
            .borrow_mut()
            .add(tool.clone(), frame.clone());
        frame.set_src(&tool.src);
        if container.append_child(&frame).is_err() {
            self.shared.tools.borrow_mut().remove(key);
            return Err(HostError::usage("mount: the container does not take children").into());
        }
        Ok(MountedTool::new(
            key,
            Rc::downgrade(&self.shared),
            &tool,
            frame,
        ))
    }

    /// Loads quote `id` and the catalog index (revalidated by its `ETag`)
    /// into the editor. Refused while the open quote has unsaved changes.
    /// With `{restore}`, what `unsaved()` gave for this quote before (a
    /// reload, a closed tab) is put back on it, marked unsaved, unless the
    /// server already has those lines; refused with `QUOTE_LOCKED` once the
    /// quote is no longer a Draft.
    #[wasm_bindgen(js_name = openQuote, unchecked_return_type = "Promise<EditorQuote>")]
    pub fn open_quote(
        &self,
        id: String,
        #[wasm_bindgen(unchecked_optional_param_type = "OpenOptions")] options: &JsValue,
    ) -> Promise {
        let shared = Rc::clone(&self.shared);
        let options = if options.is_undefined() || options.is_null() {
            Ok(OpenOptions::default())
        } else {
            read_open_options(options).map_err(HostError::Usage)
        };
        future_to_promise(async move {
            match options {
                Ok(options) => shared.open_quote(id, options).await.map_err(JsValue::from),
                Err(error) => Err(error.into()),
            }
        })
    }

    /// The open quote's unsaved changes, to keep on the device (`IndexedDB`)
    /// as they happen and give back to `openQuote(id, {restore})` after a
    /// reload; `null` when nothing is unsaved. Keep it as it is: it holds
    /// the version the changes were made on and the `Idempotency-Key` of a
    /// save that may have landed, so that they are saved once.
    #[wasm_bindgen(unchecked_return_type = "UnsavedQuote | null")]
    pub fn unsaved(&self) -> Result<JsValue, JsValue> {
        let kept = self
            .shared
            .editor
            .borrow()
            .session()
            .and_then(Session::unsaved);
        json::to_js(&kept)
            .map_err(HostError::from)
            .map_err(JsValue::from)
    }

    /// The open quote with line amounts, totals and `dirty`; `null` when no
    /// quote is open.
    #[wasm_bindgen(getter, unchecked_return_type = "EditorQuote | null")]
    pub fn quote(&self) -> Result<JsValue, JsValue> {
        self.shared.current_view().map_err(JsValue::from)
    }

    /// Saves the open quote's lines to the backend, against the version the
    /// host last had (its `ETag` as `If-Match`) and with the same
    /// `Idempotency-Key` for every attempt at the same changes. Rejects with
    /// `CONFLICT`, the open quote untouched, when the quote was changed
    /// elsewhere meanwhile; `{overwrite: true}` saves over whatever the server
    /// has.
    #[wasm_bindgen(unchecked_return_type = "Promise<EditorQuote>")]
    pub fn save(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "SaveOptions")] options: &JsValue,
    ) -> Promise {
        let shared = Rc::clone(&self.shared);
        let options = if options.is_undefined() || options.is_null() {
            Ok(SaveOptions::default())
        } else {
            json::read_js::<SaveOptions>(options, "save(options)").map_err(HostError::Usage)
        };
        future_to_promise(async move {
            match options {
                Ok(options) => shared.save(options).await.map_err(JsValue::from),
                Err(error) => Err(error.into()),
            }
        })
    }

    /// The open quote as the server has it now, without touching the open
    /// quote: after a `CONFLICT`, what to show beside it.
    #[wasm_bindgen(js_name = serverQuote, unchecked_return_type = "Promise<ServerQuote>")]
    pub fn server_quote(&self) -> Promise {
        let shared = Rc::clone(&self.shared);
        future_to_promise(async move { shared.server_quote().await.map_err(JsValue::from) })
    }

    /// Send Quote: saves unsaved changes, then moves the Draft to Sent. From
    /// then on it is locked and `addLines` answers `QUOTE_LOCKED`.
    #[wasm_bindgen(unchecked_return_type = "Promise<EditorQuote>")]
    pub fn send(&self) -> Promise {
        let shared = Rc::clone(&self.shared);
        future_to_promise(async move { shared.send().await.map_err(JsValue::from) })
    }

    /// Changes a line of the open quote as the user asked: its `qty` (the
    /// task lines a product injected follow in proportion) or `unitPrice`.
    /// Answers the quote; throws `INVALID_PARAMS` naming the field out of
    /// bounds, `NOT_FOUND` for a line the quote lacks, `QUOTE_LOCKED` once
    /// sent.
    #[wasm_bindgen(js_name = updateLine, unchecked_return_type = "EditorQuote")]
    pub fn update_line(
        &self,
        #[wasm_bindgen(js_name = lineNo)] line_no: u32,
        #[wasm_bindgen(unchecked_param_type = "{ qty?: number; unitPrice?: number }")]
        change: &JsValue,
    ) -> Result<JsValue, JsValue> {
        let change: LineChange =
            json::read_js(change, "updateLine(lineNo, change)").map_err(HostError::Usage)?;
        let edit = change.to_edit()?;
        let done = self.shared.editor.borrow_mut().edit_line(line_no, &edit);
        self.changed(done)
    }

    /// Removes a line of the open quote, with the task lines it injected.
    /// Answers the quote; throws `NOT_FOUND` or `QUOTE_LOCKED` as
    /// `updateLine` does.
    #[wasm_bindgen(js_name = removeLine, unchecked_return_type = "EditorQuote")]
    pub fn remove_line(
        &self,
        #[wasm_bindgen(js_name = lineNo)] line_no: u32,
    ) -> Result<JsValue, JsValue> {
        let done = self.shared.editor.borrow_mut().remove_line(line_no);
        self.changed(done)
    }

    /// Closes the open quote. Refused when it has unsaved changes, unless
    /// `{discard: true}`.
    #[wasm_bindgen(js_name = closeQuote)]
    pub fn close_quote(
        &self,
        #[wasm_bindgen(unchecked_param_type = "{ discard?: boolean } | undefined")]
        options: &JsValue,
    ) -> Result<(), JsValue> {
        let options: CloseOptions = if options.is_undefined() || options.is_null() {
            CloseOptions::default()
        } else {
            json::read_js(options, "closeQuote(options)").map_err(HostError::Usage)?
        };
        if !options.discard {
            self.shared.refuse_if_unsaved("closeQuote")?;
        }
        let was_open = self.shared.editor.borrow().session().is_some();
        self.shared.editor.borrow_mut().close();
        self.shared.abandon_quote_dialogs();
        if was_open {
            self.shared.emit_change(&Change::Closed);
        }
        Ok(())
    }

    /// Tells the listeners of a change the user made, and answers the quote.
    fn changed(&self, done: Result<Change, Error>) -> Result<JsValue, JsValue> {
        let change = done.map_err(HostError::Bridge)?;
        self.shared.emit_change(&change);
        Ok(self.shared.current_view()?)
    }

    /// Calls `listener(quote, change)` after every change to the open quote;
    /// returns a function that stops it.
    #[wasm_bindgen(js_name = onChange, unchecked_return_type = "() => void")]
    pub fn on_change(
        &self,
        #[wasm_bindgen(
            unchecked_param_type = "(quote: EditorQuote | null, change: QuoteChange) => void"
        )]
        listener: Function,
    ) -> Function {
        self.shared.changes.add(listener)
    }

    /// Sets the hook that shows a tool's `ui.toast` in the page's own toasts:
    /// `hook({tool, toolName, kind, message})`, the message plain text to
    /// show as text. Returns a function that removes the hook. Set it before
    /// mounting tools: the welcome offers `ui.toast` only when it is set.
    #[wasm_bindgen(js_name = onToast, unchecked_return_type = "() => void")]
    pub fn on_toast(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(request: ToastRequest) => void")] hook: Function,
    ) -> Function {
        self.shared.hooks.toast.set(hook)
    }

    /// Sets the hook that asks the user a tool's `ui.confirm` question in
    /// the page's own dialog: `hook({tool, toolName, title, message,
    /// confirmLabel, cancelLabel, signal})` answers a boolean or a Promise of
    /// one. `signal` aborts when the tool goes away (unmounted, reloaded, or
    /// its quote closed): close the dialog then; the tool hears `false`.
    /// Returns a function that removes the hook.
    #[wasm_bindgen(js_name = onConfirm, unchecked_return_type = "() => void")]
    pub fn on_confirm(
        &self,
        #[wasm_bindgen(
            unchecked_param_type = "(request: ConfirmRequest) => boolean | Promise<boolean>"
        )]
        hook: Function,
    ) -> Function {
        self.shared.hooks.confirm.set(hook)
    }

    /// Sets the hook that takes the user to a quote when a tool calls
    /// `ui.openQuote`: `hook({tool, toolName, quoteId, url, unsaved})`
    /// answers whether the user was taken there (a boolean or a Promise of
    /// one). The host has checked that the quote exists for the user;
    /// `unsaved` says the open quote has unsaved changes, which the page must
    /// not drop without asking (`host.openQuote` refuses to). Returns a
    /// function that removes the hook.
    #[wasm_bindgen(js_name = onNavigate, unchecked_return_type = "() => void")]
    pub fn on_navigate(
        &self,
        #[wasm_bindgen(
            unchecked_param_type = "(request: NavigateRequest) => boolean | Promise<boolean>"
        )]
        hook: Function,
    ) -> Function {
        self.shared.hooks.navigate.set(hook)
    }

    /// Replaces the install settings of every mounted frame of tool `slug`
    /// that was mounted with settings, and tells each connected one with
    /// `settings.changed`. A frame mounted without settings is left alone,
    /// and a slug with no frame mounted is no mistake. Throws `USAGE`
    /// naming the key for settings that are not a plain object of strings,
    /// numbers and booleans.
    #[wasm_bindgen(js_name = setToolSettings)]
    pub fn set_tool_settings(
        &self,
        slug: &str,
        #[wasm_bindgen(unchecked_param_type = "ToolSettings")] settings: &JsValue,
    ) -> Result<(), JsValue> {
        if !is_tool_slug(slug) {
            return Err(HostError::usage(format!(
                "setToolSettings: slug {slug:?} must be {SLUG_RULE}"
            ))
            .into());
        }
        let settings = read_settings(settings, "setToolSettings")?;
        self.shared.set_tool_settings(slug, &settings);
        Ok(())
    }

    /// The session ended: forgets the user and tells every connected tool
    /// (`session.ended`), once. `reason` is `"signedOut"` (the default) or
    /// `"expired"` (the page found the session gone).
    #[wasm_bindgen(js_name = endSession)]
    pub fn end_session(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "\"signedOut\" | \"expired\"")]
        reason: Option<String>,
    ) -> Result<(), JsValue> {
        let reason = match reason {
            None => SessionEndReason::SignedOut,
            Some(text) => match text.as_str() {
                "signedOut" => SessionEndReason::SignedOut,
                "expired" => SessionEndReason::Expired,
                other => {
                    return Err(HostError::usage(format!(
                        "endSession: reason {other:?} must be \"signedOut\" or \"expired\""
                    ))
                    .into());
                }
            },
        };
        self.shared.end_session(reason);
        Ok(())
    }

    /// Calls `listener(record)` after every bridge call (tool, method,
    /// duration, outcome); returns a function that stops it.
    #[wasm_bindgen(js_name = onCall, unchecked_return_type = "() => void")]
    pub fn on_call(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(record: CallRecord) => void")] listener: Function,
    ) -> Function {
        self.shared.debug.on_call.add(listener)
    }

    /// Calls `listener(record)` whenever a tool's bridge.js reports
    /// something its frame refused (a modal dialog, a navigation of the
    /// app's window, a request straight to the app's origin, a forged
    /// welcome); returns a function that stops it. The browser refuses these
    /// whether or not they are reported.
    #[wasm_bindgen(js_name = onBlocked, unchecked_return_type = "() => void")]
    pub fn on_blocked(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(record: BlockedRecord) => void")]
        listener: Function,
    ) -> Function {
        self.shared.debug.on_blocked.add(listener)
    }

    /// Whether every call and every dropped message is written to the
    /// console.
    #[wasm_bindgen(getter)]
    pub fn debug(&self) -> bool {
        self.shared.debug.enabled()
    }

    /// Turns console logging of calls and dropped messages on or off.
    #[wasm_bindgen(setter)]
    pub fn set_debug(&self, enabled: bool) {
        self.shared.debug.set_enabled(enabled);
    }

    /// The most recent calls, dropped messages and refused attempts, oldest
    /// first.
    #[wasm_bindgen(js_name = debugLog, unchecked_return_type = "DebugEntry[]")]
    pub fn debug_log(&self) -> Result<JsValue, JsValue> {
        json::to_js(&self.shared.debug.entries()).map_err(|e| HostError::from(e).into())
    }

    /// The mounted tools: slug, type, origin, whether each is connected, and
    /// the extensions its welcome offered.
    #[wasm_bindgen(unchecked_return_type = "ToolStatus[]")]
    pub fn tools(&self) -> Result<JsValue, JsValue> {
        let tools: Vec<serde_json::Value> = self
            .shared
            .tools
            .borrow()
            .iter()
            .map(|m| {
                serde_json::json!({
                    "slug": m.tool.slug,
                    "type": m.tool.tool_type,
                    "origin": m.tool.origin,
                    "connected": m.link.is_some(),
                    "capabilities": m.link.as_ref().map_or(&[][..], |link| &link.capabilities[..]),
                })
            })
            .collect();
        json::to_js(&tools).map_err(|e| HostError::from(e).into())
    }

    /// Forgets the signed-in user kept from `GET /me`; call it after the
    /// page signs a user in (and [`Host::end_session`] when one signs out).
    #[wasm_bindgen(js_name = forgetSession)]
    pub fn forget_session(&self) {
        self.shared.forget_context();
        self.shared.page_context.forget();
        self.shared.session_ended.set(false);
    }

    /// Unmounts every tool, stops listening, and drops the listeners. The
    /// host answers nothing afterwards.
    pub fn destroy(&mut self) {
        if let Some(on_message) = self.on_message.take() {
            let _ = self.shared.window.remove_event_listener_with_callback(
                "message",
                on_message.as_ref().unchecked_ref(),
            );
        }
        for mounted in self.shared.tools.borrow_mut().drain() {
            mounted.frame.remove();
        }
        connectivity::stop(&self.shared);
        self.shared.changes.clear();
        self.shared.hooks.clear();
        self.shared.debug.on_call.clear();
        self.shared.debug.on_blocked.clear();
    }
}

impl Host {
    /// The state the page API shares with the rest of the module.
    pub(crate) fn shared(&self) -> &Rc<Shared> {
        &self.shared
    }

    /// Where the last `quotes.addLines` spent its time, phase by phase: for
    /// the bench (`host/tests/bench.rs`), not the page (no JavaScript name).
    #[doc(hidden)]
    pub fn add_lines_phases(&self) -> AddLinesPhases {
        self.shared.add_lines_phases.get()
    }

    /// Where the last resolved `openQuote` spent its time, phase by phase:
    /// for the bench, like [`Host::add_lines_phases`].
    #[doc(hidden)]
    pub fn open_quote_phases(&self) -> OpenQuotePhases {
        self.shared.open_quote_phases.get()
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.destroy();
    }
}
