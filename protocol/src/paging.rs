//! Paging: the request (`page`, `pageSize`, and `codes` where a list takes
//! them) and the envelope every list answers with.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Violations};
use crate::input::{Fields, Recorded, index};
use crate::limits::{DEFAULT_PAGE, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, TEXT_MAX_CHARS};

/// The envelope of every list, bridge and REST alike.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgePagedResult<T> {
    /// This page's items.
    pub items: Vec<T>,
    /// Items across all pages.
    pub total_count: u64,
    /// This page's number, from 1.
    pub page: u32,
    /// The page size asked for.
    pub page_size: u32,
}

/// A valid page request: `page` from 1, `pageSize` from 1 to 500.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageRequest {
    page: u32,
    page_size: u32,
}

impl Default for PageRequest {
    fn default() -> Self {
        Self {
            page: DEFAULT_PAGE,
            page_size: DEFAULT_PAGE_SIZE,
        }
    }
}

impl PageRequest {
    /// A page request, checked.
    pub fn new(page: u32, page_size: u32) -> Result<Self, Error> {
        let mut errors = Violations::default();
        let request = checked(
            Some(u64::from(page)),
            Some(u64::from(page_size)),
            &mut errors,
        );
        errors.finish(request)
    }

    /// From REST query parameters (`?page=2&pageSize=100`); absent means the
    /// default.
    pub fn from_query(page: Option<&str>, page_size: Option<&str>) -> Result<Self, Error> {
        let mut errors = Violations::default();
        let page = page.and_then(|text| parse_query_number("page", text, &mut errors));
        let page_size =
            page_size.and_then(|text| parse_query_number("pageSize", text, &mut errors));
        let request = checked(page, page_size, &mut errors);
        errors.finish(request)
    }

    /// The page number, from 1.
    pub fn page(self) -> u32 {
        self.page
    }

    /// Items per page.
    pub fn page_size(self) -> u32 {
        self.page_size
    }

    /// How many items come before this page.
    pub fn offset(self) -> u64 {
        u64::from(self.page - 1) * u64::from(self.page_size)
    }

    /// Wraps one page of items in the envelope.
    pub fn envelope<T>(self, items: Vec<T>, total_count: u64) -> BridgePagedResult<T> {
        BridgePagedResult {
            items,
            total_count,
            page: self.page,
            page_size: self.page_size,
        }
    }
}

/// The options of a list call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListRequest {
    /// Which page.
    pub paging: PageRequest,
    /// `taskTemplates.list` / `costItems.list` only: the codes to return. When
    /// present, paging is ignored and every active match is returned.
    pub codes: Option<Vec<String>>,
}

impl ListRequest {
    /// From REST query parameters (`?page=2&pageSize=100`, or
    /// `?codes=A,B` where a list takes codes): the codes are split at commas,
    /// trimmed, and blanks dropped. `page` and `pageSize` are checked as on
    /// every list, and then ignored when `codes` is present.
    pub fn from_query(
        page: Option<&str>,
        page_size: Option<&str>,
        codes: Option<&str>,
    ) -> Result<Self, Error> {
        let paging = PageRequest::from_query(page, page_size)?;
        let codes = codes.map(|codes| {
            codes
                .split(',')
                .map(str::trim)
                .filter(|code| !code.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        });
        Ok(Self::new(paging, codes))
    }

    /// `paging`, or the default page when `codes` is present (which
    /// ignores paging, once it has been checked).
    fn new(paging: PageRequest, codes: Option<Vec<String>>) -> Self {
        let paging = if codes.is_some() {
            PageRequest::default()
        } else {
            paging
        };
        Self { paging, codes }
    }
}

/// Most `codes` one list call may ask for.
pub const MAX_CODES: usize = 500;

/// Reads a list method's options (`{page?, pageSize?}`, plus `codes?` when
/// `accepts_codes`); `null` or absent means the defaults. `page` and
/// `pageSize` are checked even beside `codes`, which then ignores them.
pub fn read_list_request(params: &Value, accepts_codes: bool) -> Result<ListRequest, Error> {
    if params.is_null() {
        return Ok(ListRequest::default());
    }
    let known: &[&str] = if accepts_codes {
        &["page", "pageSize", "codes"]
    } else {
        &["page", "pageSize"]
    };
    let mut errors = Violations::default();
    let request = Fields::open(params, "", known, &mut errors).and_then(|mut fields| {
        let codes = if accepts_codes {
            read_codes(&mut fields)
        } else {
            Ok(None)
        };
        let page = whole_number(&mut fields, "page");
        let page_size = whole_number(&mut fields, "pageSize");
        let paging = checked(page.ok()?, page_size.ok()?, fields.errors());
        Some(ListRequest::new(paging?, codes.ok()?))
    });
    errors.finish(request)
}

/// The codes asked for, `None` when absent.
fn read_codes(fields: &mut Fields<'_, '_>) -> Result<Option<Vec<String>>, Recorded> {
    if !fields.has("codes") {
        return Ok(None);
    }
    let items = fields.array("codes").ok_or(Recorded)?;
    if items.len() > MAX_CODES {
        fields.violation(
            "codes",
            format!("at most {MAX_CODES} codes per call (got {})", items.len()),
        );
        return Err(Recorded);
    }
    let mut codes = Vec::with_capacity(items.len());
    let mut valid = true;
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::String(code)
                if !code.trim().is_empty() && code.chars().count() <= TEXT_MAX_CHARS =>
            {
                codes.push(code.trim().to_owned());
            }
            _ => {
                let path = index(&fields.path_of("codes"), i);
                fields.errors().push(
                    path,
                    format!("must be a non-empty string of at most {TEXT_MAX_CHARS} characters"),
                );
                valid = false;
            }
        }
    }
    if valid {
        Ok(Some(codes))
    } else {
        Err(Recorded)
    }
}

/// A whole number field, `None` when absent.
fn whole_number(fields: &mut Fields<'_, '_>, name: &str) -> Result<Option<u64>, Recorded> {
    if !fields.has(name) {
        return Ok(None);
    }
    let value = fields.number(name).ok_or(Recorded)?;
    if value.fract() != 0.0 || !(0.0..=f64::from(u32::MAX)).contains(&value) {
        fields.violation(name, format!("must be a whole number from 1 (got {value})"));
        return Err(Recorded);
    }
    // Whole, non-negative and at most u32::MAX: the conversion is exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(Some(value as u64))
}

fn parse_query_number(name: &str, text: &str, errors: &mut Violations) -> Option<u64> {
    let parsed = text.trim().parse::<u64>().ok();
    if parsed.is_none() {
        errors.push(
            name,
            format!("must be a whole number from 1 (got \"{text}\")"),
        );
    }
    parsed
}

fn checked(
    page: Option<u64>,
    page_size: Option<u64>,
    errors: &mut Violations,
) -> Option<PageRequest> {
    let page = page.unwrap_or(u64::from(DEFAULT_PAGE));
    let page_size = page_size.unwrap_or(u64::from(DEFAULT_PAGE_SIZE));
    let page = match u32::try_from(page) {
        Ok(page) if page >= 1 => Some(page),
        _ => {
            errors.push(
                "page",
                format!("must be from 1 to {} (got {page})", u32::MAX),
            );
            None
        }
    };
    let page_size = match u32::try_from(page_size) {
        Ok(size) if (1..=MAX_PAGE_SIZE).contains(&size) => Some(size),
        _ => {
            errors.push(
                "pageSize",
                format!("must be from 1 to {MAX_PAGE_SIZE} (got {page_size})"),
            );
            None
        }
    };
    Some(PageRequest {
        page: page?,
        page_size: page_size?,
    })
}
