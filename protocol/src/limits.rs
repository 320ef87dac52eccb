//! Every numeric limit of the protocol, in one place: SPEC.md's Limits
//! table, the decisions of DESIGN.md §4, and the bounds that keep decimal
//! arithmetic far from overflow.

use rust_decimal::Decimal;

const fn whole(value: u32) -> Decimal {
    Decimal::from_parts(value, 0, 0, false, 0)
}

/// `page` is 1-based and starts at 1 when omitted.
pub const DEFAULT_PAGE: u32 = 1;
/// `pageSize` when omitted.
pub const DEFAULT_PAGE_SIZE: u32 = 50;
/// Largest `pageSize` on any list.
pub const MAX_PAGE_SIZE: u32 = 500;

/// Fewest lines of a `quotes.create` request.
pub const CREATE_MIN_LINES: usize = 1;
/// Most lines of a `quotes.create` request.
pub const CREATE_MAX_LINES: usize = 200;
/// Largest `qty` of a `quotes.create` line.
pub const CREATE_MAX_QTY: Decimal = whole(10_000);
/// Largest `unitPrice` of a `quotes.create` line.
pub const CREATE_MAX_UNIT_PRICE: Decimal = whole(1_000_000);

/// Most lines in one `quotes.addLines` batch.
pub const ADD_LINES_MAX_BATCH: usize = 1000;
/// Longest `section` label, counted in characters after trimming.
pub const SECTION_MAX_CHARS: usize = 100;
/// Largest `qty` of an `addLines` line. SPEC.md only asks for more than 0;
/// this bound keeps every product of quantity and price exact in decimal.
pub const MAX_LINE_QTY: Decimal = whole(1_000_000_000);
/// Largest unit or cost price of an `addLines` line (same reason).
pub const MAX_LINE_PRICE: Decimal = whole(1_000_000_000);
/// Most lines an open quote holds, injected task lines included.
pub const QUOTE_MAX_LINES: usize = 10_000;

/// Longest free-text field (description, specification, location, codes,
/// titles, references, names).
pub const TEXT_MAX_CHARS: usize = 1000;
/// Longest email address (RFC 5321's path limit).
pub const EMAIL_MAX_CHARS: usize = 254;
