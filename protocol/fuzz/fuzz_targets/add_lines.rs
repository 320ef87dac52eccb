//! Feeds arbitrary bytes to `quotes.addLines` on a Draft quote that already
//! holds lines, once they parse as JSON (the host reads every batch it does
//! not take field by field as a JSON value). A rejected batch leaves the quote
//! byte for byte as it was; an accepted one adds up (totals are the sums of
//! the lines, every injected line's parent exists, line numbers stay unique and
//! new ones are never reused, the quote grew by exactly the lines reported).
#![no_main]

use std::collections::{BTreeMap, HashMap, HashSet};

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolbridge_protocol::add_lines::LineType;
use toolbridge_protocol::money::LineAmounts;
use toolbridge_protocol::open_quote::{MergeReport, OpenQuote};
use toolbridge_protocol::rpc::{RpcId, RpcResponse};
use toolbridge_protocol::{Decimal, Error, ErrorCode};
use toolbridge_protocol_fuzz::{Fixture, check_error_reply, fixture};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let fixture = fixture();

    let mut quote = fixture.draft.clone();
    match quote.add_lines(&value, &fixture.catalog) {
        Ok(report) => check_merged(fixture, &quote, &report, &value),
        Err(error) => check_rejected(fixture, &quote, &error),
    }

    // A quote that is no longer a Draft refuses any batch, unchanged.
    let mut sent = fixture.sent.clone();
    let locked = sent.add_lines(&value, &fixture.catalog);
    assert!(matches!(locked, Err(Error::QuoteLocked(_))), "{locked:?}");
    assert_eq!(sent, fixture.sent);
});

/// A refused batch: `INVALID_PARAMS` under `lines`, a well-formed reply, and
/// the quote exactly as it was.
fn check_rejected(fixture: &Fixture, quote: &OpenQuote, error: &Error) {
    assert_eq!(error.code(), ErrorCode::InvalidParams, "{error:?}");
    assert!(!error.details().is_empty());
    for violation in error.details() {
        assert!(violation.path.starts_with("lines"), "{violation:?}");
        assert!(!violation.message.is_empty(), "{violation:?}");
    }
    let id = RpcId::Number(1);
    check_error_reply(
        &RpcResponse::failure(Some(id.clone()), error),
        error,
        Some(&id),
    );
    let after = serde_json::to_string(&quote.to_dto()).expect("a quote serialises");
    assert_eq!(
        after, fixture.draft_json,
        "a refused batch changed the quote"
    );
    assert_eq!(quote, &fixture.draft);
}

/// A merged batch: the quote kept what it had, grew by the lines reported,
/// and every figure and reference in it is consistent.
fn check_merged(fixture: &Fixture, quote: &OpenQuote, report: &MergeReport, batch: &Value) {
    let sent = batch.as_array().expect("only an array merges");
    assert_eq!(report.lines_added, sent.len());
    let used_product_id = sent
        .iter()
        .any(|line| line.get("productId").is_some_and(Value::is_string));
    assert_eq!(report.used_product_id, used_product_id);

    let old = fixture.draft.lines();
    let lines = quote.lines();
    assert_eq!(lines.len(), old.len() + report.total_lines());
    assert_eq!(&lines[..old.len()], old, "existing lines changed");
    assert_eq!(
        lines.iter().filter(|line| line.injected).count(),
        old.iter().filter(|line| line.injected).count() + report.tasks_injected
    );

    // Line numbers: unique, and new ones above every old one (never reused).
    let mut numbers = HashSet::new();
    assert!(
        lines.iter().all(|line| numbers.insert(line.line_no)),
        "a line number repeats"
    );
    let old_max = old.iter().map(|line| line.line_no).max().unwrap_or(0);
    assert!(lines[old.len()..].iter().all(|line| line.line_no > old_max));

    // Injected lines sit under an existing, earlier product line of their group.
    let by_no: HashMap<u32, usize> = lines
        .iter()
        .enumerate()
        .map(|(at, line)| (line.line_no, at))
        .collect();
    for (at, line) in lines.iter().enumerate() {
        assert_eq!(line.injected, line.parent_line_no.is_some(), "{line:?}");
        let Some(parent_no) = line.parent_line_no else {
            continue;
        };
        let parent_at = *by_no
            .get(&parent_no)
            .expect("an injected line's parent exists");
        let parent = &lines[parent_at];
        assert!(
            parent_at < at && !parent.injected,
            "{line:?} under {parent:?}"
        );
        assert_eq!(parent.line_type, LineType::Product);
        assert_eq!(line.line_type, LineType::Task);
        assert_eq!(
            (line.group_id, &line.section),
            (parent.group_id, &parent.section)
        );
    }

    // Group keys keep their ids; every line's group is 0 or a key's.
    let keys: &BTreeMap<String, u32> = quote.group_keys();
    for (key, id) in fixture.draft.group_keys() {
        assert_eq!(keys.get(key), Some(id), "group key {key} changed its id");
    }
    let ids: HashSet<u32> = keys.values().copied().collect();
    assert_eq!(ids.len(), keys.len(), "two group keys share an id");
    assert!(
        lines
            .iter()
            .all(|line| line.group_id == 0 || ids.contains(&line.group_id))
    );

    // The totals add up.
    let dto = quote.to_dto();
    let sum = |pick: fn(&LineAmounts) -> Decimal| -> Decimal {
        dto.lines.iter().map(|line| pick(&line.amounts)).sum()
    };
    assert_eq!(dto.totals.nett, sum(|a| a.nett));
    assert_eq!(dto.totals.tax, sum(|a| a.tax));
    assert_eq!(dto.totals.total, sum(|a| a.total));
    assert_eq!(dto.totals.cost, sum(|a| a.cost));
    assert_eq!(dto.totals.margin, dto.totals.nett - dto.totals.cost);
    for priced in &dto.lines {
        let (line, amounts) = (&priced.line, priced.amounts);
        let expected =
            LineAmounts::compute(line.qty, line.unit_price, line.cost_price, line.tax_rate);
        assert_eq!(amounts, expected);
        assert_eq!(amounts.total, amounts.nett + amounts.tax);
        assert_eq!(amounts.nett, amounts.nett.round_dp(2));
        assert!(line.tax_rate >= Decimal::ZERO && line.tax_rate <= Decimal::ONE);
    }

    // What the host merged it can open again from the quote's DTO.
    let reopened = OpenQuote::from_dto(dto).expect("a merged quote reopens from its DTO");
    assert_eq!(&reopened, quote);
}
