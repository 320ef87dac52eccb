//! The quote open in the editor: the in-memory [`OpenQuote`] with the
//! catalog it is checked against, whether it has unsaved changes, the
//! version of it the server last answered and what a save sends to keep to
//! it, and the changes the page hears about.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolbridge_protocol::Error;
use toolbridge_protocol::add_lines::{LineByLine, ValidBatch};
use toolbridge_protocol::catalog::Catalog;
use toolbridge_protocol::context::Role;
use toolbridge_protocol::method::Method;
use toolbridge_protocol::notification::{Deprecation, QuoteChangeKind};
use toolbridge_protocol::open_quote::{LineEdit, OpenQuote};
use toolbridge_protocol::quote::{QuoteDto, QuoteLine};
use toolbridge_protocol::quote_view::BridgeOpenQuoteDto;

/// What happened to the open quote, as `onChange` listeners receive it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub(crate) enum Change {
    /// A quote was opened.
    Opened,
    /// A tool's `addLines` batch was merged.
    #[serde(rename_all = "camelCase")]
    LinesAdded {
        /// The tool's slug.
        tool: String,
        /// Lines the tool sent.
        lines_added: usize,
        /// Task lines injected from task sequences.
        tasks_injected: usize,
        /// A deprecated part of the bridge the batch used (the tool is
        /// told, not the page).
        #[serde(skip)]
        deprecation: Option<Deprecation>,
    },
    /// The user changed a line's quantity or price.
    #[serde(rename_all = "camelCase")]
    LineEdited {
        /// The line's number.
        line_no: u32,
    },
    /// The user removed a line (with the task lines it injected).
    #[serde(rename_all = "camelCase")]
    LinesRemoved {
        /// The numbers of the lines removed.
        line_nos: Vec<u32>,
    },
    /// The quote was saved.
    Saved,
    /// The quote was sent (and is now locked).
    Sent,
    /// The quote was closed.
    Closed,
}

impl Change {
    /// The change as `quote.changed` tells tools of it.
    pub(crate) fn kind_for_tools(&self) -> QuoteChangeKind {
        match self {
            Change::Opened => QuoteChangeKind::Opened,
            Change::LinesAdded { .. } => QuoteChangeKind::LinesAdded,
            Change::LineEdited { .. } => QuoteChangeKind::Edited,
            Change::LinesRemoved { .. } => QuoteChangeKind::Removed,
            Change::Saved => QuoteChangeKind::Saved,
            Change::Sent => QuoteChangeKind::Sent,
            Change::Closed => QuoteChangeKind::Closed,
        }
    }
}

/// The open quote as the page reads it: the quote with line amounts and
/// totals, and whether it has changes not yet saved.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QuoteView {
    #[serde(flatten)]
    quote: QuoteDto,
    dirty: bool,
    /// How many changes (a tool's batch, an edit, a removal) the backend
    /// does not have yet.
    unsaved_changes: u64,
    /// The signed-in user's role, for the tools' view.
    #[serde(skip)]
    role: Role,
}

impl QuoteView {
    /// The same quote as a tool reads it (`quotes.getOpen`), cost left out
    /// for a role that does not see it.
    pub(crate) fn for_tools(&self) -> BridgeOpenQuoteDto {
        BridgeOpenQuoteDto::new(&self.quote, self.dirty, self.role)
    }
}

/// A quote being edited.
pub(crate) struct Session {
    pub(crate) quote: OpenQuote,
    pub(crate) catalog: Rc<Catalog>,
    pub(crate) role: Role,
    /// Bumped by every change.
    pub(crate) revision: u64,
    /// The revision the backend has.
    pub(crate) saved: u64,
    /// Set while Send Quote is in flight: no more lines.
    pub(crate) sending: bool,
    /// The quote's `ETag` as the backend last answered it (opening it,
    /// saving, sending): the version a save is made against (`If-Match`).
    pub(crate) etag: Option<String>,
    /// The `Idempotency-Key` of the last save not known to have landed, and
    /// the revision it saved: a save of the same revision sends it again, so
    /// that a save retried after a failure lands once.
    save_key: Option<(u64, String)>,
    /// The [`fingerprint`] of the lines and group keys as the backend last
    /// answered them (opening the quote, saving, sending): what this host's
    /// changes were made on. Should a save meet a newer version whose lines
    /// are still these, that version changed only the header, which a save
    /// of the lines leaves as it is.
    pub(crate) base: u64,
    /// The [`fingerprint`] of what the last save whose outcome is unknown
    /// sent (it failed on the network, or the backend failed): should a
    /// later save meet a newer version with exactly these lines, that
    /// version is this host's own save.
    pub(crate) unsettled: Option<u64>,
}

/// A fingerprint of a quote's lines and group keys, to tell whether two
/// copies have the same (within this page: the hasher's keys are fixed, and
/// a collision of 64 bits between two versions of one quote is not a worry).
pub(crate) fn fingerprint<'a>(
    lines: impl IntoIterator<Item = &'a QuoteLine>,
    group_keys: &BTreeMap<String, u32>,
) -> u64 {
    let mut hasher = DefaultHasher::new();
    let mut count: usize = 0;
    for line in lines {
        line.hash(&mut hasher);
        count += 1;
    }
    count.hash(&mut hasher);
    group_keys.hash(&mut hasher);
    hasher.finish()
}

/// The [`fingerprint`] of a quote as the backend answered it.
pub(crate) fn fingerprint_of(quote: &QuoteDto) -> u64 {
    fingerprint(
        quote.lines.iter().map(|priced| &priced.line),
        &quote.group_keys,
    )
}

/// The version of [`Unsaved`]'s shape; a kept copy of another is refused.
const UNSAVED_FORMAT: u32 = 1;

/// The open quote's unsaved changes, for the page to keep on the device
/// (`host.unsaved()`) and give back to `openQuote` after a reload: the lines,
/// the version they were made on, and what a save of them already sent.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Unsaved {
    /// [`UNSAVED_FORMAT`].
    format: u32,
    /// The quote's id.
    pub(crate) quote_id: String,
    /// The quote's reference, for the page to show.
    reference: String,
    /// The version the changes were made on (`If-Match` of their save).
    etag: Option<String>,
    /// The lines as the user left them.
    lines: Vec<QuoteLine>,
    /// The group keys with them.
    group_keys: BTreeMap<String, u32>,
    /// How many changes the backend does not have.
    changes: u64,
    /// The `Idempotency-Key` a save of exactly these changes sent without
    /// hearing whether it landed: sent again, the server answers that save
    /// rather than making a second.
    save_key: Option<String>,
    /// The [`fingerprint`] of the lines the changes were made on, in hex.
    base: String,
    /// The [`fingerprint`] of what a save whose outcome is unknown sent, in
    /// hex.
    unsettled: Option<String>,
}

/// A [`fingerprint`] as [`Unsaved`] keeps it.
fn hex(fingerprint: u64) -> String {
    format!("{fingerprint:016x}")
}

/// A fingerprint [`Unsaved`] kept; `None` for one that is not hex (kept by
/// another build: it then matches nothing, and a save that meets a newer
/// version is refused as a conflict rather than guessed right).
fn unhex(text: &str) -> Option<u64> {
    u64::from_str_radix(text, 16).ok()
}

impl Session {
    /// A freshly loaded quote at the version `etag` names, nothing unsaved.
    pub(crate) fn new(
        quote: OpenQuote,
        catalog: Rc<Catalog>,
        role: Role,
        etag: Option<String>,
    ) -> Self {
        let base = fingerprint(quote.lines(), quote.group_keys());
        Self {
            quote,
            catalog,
            role,
            revision: 0,
            saved: 0,
            sending: false,
            etag,
            save_key: None,
            base,
            unsettled: None,
        }
    }

    /// The quote `server` as the backend answered it now (at the version
    /// `etag` names), with the unsaved changes `kept` put back on it: the
    /// lines as the user left them, marked unsaved, to be saved against the
    /// version they were made on. `None` when there is nothing left to put
    /// back: the backend has these very lines (a save of them landed).
    ///
    /// # Errors
    ///
    /// `QUOTE_LOCKED` once the quote is no longer a Draft; `INVALID_PARAMS`
    /// for a kept copy of another shape, or lines no saved quote could have.
    pub(crate) fn restored(
        server: &QuoteDto,
        catalog: Rc<Catalog>,
        role: Role,
        etag: Option<&str>,
        kept: Unsaved,
    ) -> Result<Option<Self>, Error> {
        if kept.format != UNSAVED_FORMAT {
            return Err(Error::InvalidParams(vec![
                toolbridge_protocol::Violation::new(
                    "restore.format",
                    format!(
                        "unsaved changes kept in format {}, which this host does not read (it reads {UNSAVED_FORMAT})",
                        kept.format
                    ),
                ),
            ]));
        }
        let server_lines = fingerprint_of(server);
        if fingerprint(&kept.lines, &kept.group_keys) == server_lines {
            return Ok(None);
        }
        let dto = OpenQuote::saved(server.header.clone(), kept.lines, kept.group_keys)?;
        let quote = OpenQuote::from_dto(dto)?;
        // Made on the version the backend still has: its lines are the base.
        let base = if etag.is_some() && etag == kept.etag.as_deref() {
            server_lines
        } else {
            unhex(&kept.base).unwrap_or(!server_lines)
        };
        let revision = kept.changes.max(1);
        Ok(Some(Self {
            quote,
            catalog,
            role,
            revision,
            saved: 0,
            sending: false,
            etag: kept.etag,
            save_key: kept.save_key.map(|key| (revision, key)),
            base,
            unsettled: kept.unsettled.as_deref().and_then(unhex),
        }))
    }

    /// The unsaved changes, for the page to keep; `None` when there are none.
    pub(crate) fn unsaved(&self) -> Option<Unsaved> {
        if !self.is_dirty() {
            return None;
        }
        let header = self.quote.header();
        Some(Unsaved {
            format: UNSAVED_FORMAT,
            quote_id: header.id.clone(),
            reference: header.reference.clone(),
            etag: self.etag.clone(),
            lines: self.quote.lines().to_vec(),
            group_keys: self.quote.group_keys().clone(),
            changes: self.revision.wrapping_sub(self.saved),
            save_key: self
                .save_key
                .as_ref()
                .filter(|(revision, _)| *revision == self.revision)
                .map(|(_, key)| key.clone()),
            base: hex(self.base),
            unsettled: self.unsettled.map(hex),
        })
    }

    /// Whether there are changes the backend does not have.
    pub(crate) fn is_dirty(&self) -> bool {
        self.revision != self.saved
    }

    /// The `Idempotency-Key` for saving the current revision: the one an
    /// earlier save of the same revision sent, else a new one from `new_key`.
    pub(crate) fn save_key(
        &mut self,
        new_key: impl FnOnce() -> Result<String, Error>,
    ) -> Result<String, Error> {
        match &self.save_key {
            Some((revision, key)) if *revision == self.revision => Ok(key.clone()),
            _ => {
                let key = new_key()?;
                self.save_key = Some((self.revision, key.clone()));
                Ok(key)
            }
        }
    }

    /// Takes the backend's copy after a save or send of `revision`, at the
    /// version `etag` names: it replaces the local one unless more changes
    /// were made meanwhile. What a save of that revision kept to send again
    /// is dropped: it landed.
    pub(crate) fn settle(
        &mut self,
        revision: u64,
        saved: QuoteDto,
        etag: Option<String>,
    ) -> Result<(), Error> {
        self.saved = self.saved.max(revision);
        self.base = fingerprint_of(&saved);
        if etag.is_some() {
            self.etag = etag;
        }
        if self
            .save_key
            .as_ref()
            .is_some_and(|(keyed, _)| *keyed <= revision)
        {
            self.save_key = None;
        }
        self.unsettled = None;
        if self.revision == revision {
            self.quote = OpenQuote::from_dto(saved)?;
        }
        Ok(())
    }
}

/// The editor: at most one open quote.
#[derive(Default)]
pub(crate) struct Editor {
    session: Option<Session>,
    /// Bumped by every open and close, so that a slow `openQuote` that was
    /// overtaken does not win.
    generation: u64,
}

impl Editor {
    /// The open quote.
    pub(crate) fn session(&self) -> Option<&Session> {
        self.session.as_ref()
    }

    /// The open quote, to change.
    pub(crate) fn session_mut(&mut self) -> Option<&mut Session> {
        self.session.as_mut()
    }

    /// Starts an open or close; returns its generation.
    pub(crate) fn begin(&mut self) -> u64 {
        self.generation = self.generation.wrapping_add(1);
        self.generation
    }

    /// Whether `generation` is still the latest open or close.
    pub(crate) fn is_current(&self, generation: u64) -> bool {
        self.generation == generation
    }

    /// Installs a loaded quote.
    pub(crate) fn install(&mut self, session: Session) {
        self.session = Some(session);
    }

    /// Closes the quote.
    pub(crate) fn close(&mut self) {
        self.begin();
        self.session = None;
    }

    /// The open quote as the page reads it.
    pub(crate) fn view(&self) -> Option<QuoteView> {
        self.session.as_ref().map(|session| QuoteView {
            quote: session.quote.to_dto(),
            dirty: session.is_dirty(),
            unsaved_changes: session.revision.wrapping_sub(session.saved),
            role: session.role,
        })
    }

    /// The open quote as a tool reads it (`quotes.getOpen`,
    /// `quote.changed`), made straight from the lines, without the page's
    /// view first.
    pub(crate) fn for_tools(&self) -> Option<BridgeOpenQuoteDto> {
        self.session
            .as_ref()
            .map(|session| session.quote.for_tools(session.is_dirty(), session.role))
    }

    /// The user's change to one line: its quantity or unit price.
    pub(crate) fn edit_line(&mut self, line_no: u32, edit: &LineEdit) -> Result<Change, Error> {
        let session = self.writable("updateLine")?;
        session.quote.edit_line(line_no, edit)?;
        session.revision = session.revision.wrapping_add(1);
        Ok(Change::LineEdited { line_no })
    }

    /// The user's removal of a line and the task lines it injected.
    pub(crate) fn remove_line(&mut self, line_no: u32) -> Result<Change, Error> {
        let session = self.writable("removeLine")?;
        let line_nos = session.quote.remove_line(line_no)?;
        session.revision = session.revision.wrapping_add(1);
        Ok(Change::LinesRemoved { line_nos })
    }

    /// The open quote, if the user may change it now: their role writes
    /// quotes and Send Quote is not under way. `what` names the change.
    fn writable(&mut self, what: &str) -> Result<&mut Session, Error> {
        let session = self.session.as_mut().ok_or(Error::NoOpenQuote)?;
        Method::QuotesAddLines.authorize_role(session.role)?;
        if session.sending {
            return Err(Error::QuoteLocked(format!(
                "{what}: quote {} is being sent and can no longer be changed",
                session.quote.header().reference
            )));
        }
        Ok(session)
    }

    /// `quotes.addLines`, its batch as a JSON value: the first half, the
    /// batch validated against the open quote's catalog, the quote untouched.
    pub(crate) fn validate_lines(&mut self, params: &Value) -> Result<ValidBatch, Error> {
        let session = self.writable("addLines")?;
        session.quote.validate_lines(params, &session.catalog)
    }

    /// [`Editor::validate_lines`] for a batch given line by line by `give`;
    /// `None` when `give` gives up (the batch then goes as a JSON value).
    pub(crate) fn validate_lines_by_field(
        &mut self,
        lines: usize,
        give: impl FnOnce(&mut LineByLine<'_>) -> Option<()>,
    ) -> Option<Result<ValidBatch, Error>> {
        let session = match self.writable("addLines") {
            Ok(session) => session,
            Err(error) => return Some(Err(error)),
        };
        let mut given = match session.quote.lines_by_field(&session.catalog, lines) {
            Ok(given) => given,
            Err(error) => return Some(Err(error)),
        };
        give(&mut given)?;
        Some(given.finish())
    }

    /// The second half: the tool `tool`'s batch, as
    /// [`Editor::validate_lines`] or [`Editor::validate_lines_by_field`]
    /// gave it, merged whole, or refused with the quote untouched.
    pub(crate) fn merge_lines(&mut self, batch: ValidBatch, tool: &str) -> Result<Change, Error> {
        let session = self.writable("addLines")?;
        let report = session.quote.merge_valid_lines(batch, &session.catalog)?;
        session.revision = session.revision.wrapping_add(1);
        Ok(Change::LinesAdded {
            tool: tool.to_owned(),
            lines_added: report.lines_added,
            tasks_injected: report.tasks_injected,
            deprecation: report.deprecation(),
        })
    }
}
