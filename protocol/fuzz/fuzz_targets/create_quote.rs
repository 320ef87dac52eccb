//! Feeds arbitrary bytes, read as JSON, to the one rule set of `quotes.create`
//! (bridge) and `POST /api/v1/quotes` (REST). An accepted request respects
//! every limit: 1 to 200 lines, `qty` above 0 and at most 10000, `unitPrice`
//! from 0 to 1000000, `taxRate` a fraction from 0 to 1, and a customer of the
//! surface's kind. A refused one is `INVALID_PARAMS` whose every violation
//! has a message and names the field it is about (only a request that is not
//! an object at all is refused as a whole, at the empty path).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolbridge_protocol::create_quote::{
    CustomerChoice, LineProduct, NewQuote, validate_bridge_create, validate_rest_create,
};
use toolbridge_protocol::limits::{
    CREATE_MAX_LINES, CREATE_MAX_QTY, CREATE_MAX_UNIT_PRICE, CREATE_MIN_LINES,
};
use toolbridge_protocol::problem::Problem;
use toolbridge_protocol::rpc::{RpcId, RpcResponse};
use toolbridge_protocol::{Decimal, Error, ErrorCode};
use toolbridge_protocol_fuzz::check_error_reply;

fuzz_target!(|data: &[u8]| {
    let Ok(request) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    match validate_bridge_create(&request) {
        Ok(quote) => {
            check_accepted(&quote);
            let tax_given = quote.lines.iter().all(|line| line.tax_rate.is_some());
            assert!(tax_given, "a bridge line without taxRate was accepted");
            match &quote.customer {
                CustomerChoice::FromJob { job_id } => check_text(job_id),
                CustomerChoice::UpsertByEmail { email, .. } => check_email(email),
                CustomerChoice::New { name, email, .. } => {
                    check_text(name);
                    email.as_deref().map(check_email);
                }
                CustomerChoice::Existing { .. } => panic!("a bridge request named a customer id"),
            }
            for line in &quote.lines {
                assert!(!matches!(line.product, LineProduct::SkuId(_)));
            }
        }
        Err(error) => check_refused(&request, &error),
    }
    match validate_rest_create(&request) {
        Ok(quote) => {
            check_accepted(&quote);
            let CustomerChoice::Existing { customer_id } = &quote.customer else {
                panic!("a REST request chose its customer by other means: {quote:?}");
            };
            check_text(customer_id);
            for line in &quote.lines {
                let LineProduct::SkuId(id) = &line.product else {
                    panic!("a REST line without skuId was accepted: {line:?}");
                };
                check_text(id);
            }
        }
        Err(error) => check_refused(&request, &error),
    }
});

/// The limits both surfaces share.
fn check_accepted(quote: &NewQuote) {
    assert!(
        (CREATE_MIN_LINES..=CREATE_MAX_LINES).contains(&quote.lines.len()),
        "{} lines accepted",
        quote.lines.len()
    );
    for line in &quote.lines {
        assert!(
            line.qty > Decimal::ZERO && line.qty <= CREATE_MAX_QTY,
            "{line:?}"
        );
        let price = line.unit_price;
        assert!(
            price >= Decimal::ZERO && price <= CREATE_MAX_UNIT_PRICE,
            "{line:?}"
        );
        if let Some(rate) = line.tax_rate {
            assert!(rate >= Decimal::ZERO && rate <= Decimal::ONE, "{line:?}");
        }
        line.description.as_deref().map(check_text);
        if let LineProduct::Code(code) = &line.product {
            check_text(code);
        }
    }
    quote.title.as_deref().map(check_text);
    quote.quote_ref.as_deref().map(check_text);
}

/// Text the rules keep is trimmed and not empty.
fn check_text(text: &str) {
    assert!(!text.is_empty() && text.trim() == text, "{text:?}");
}

fn check_email(email: &str) {
    check_text(email);
    assert!(email.contains('@') && !email.chars().any(char::is_whitespace));
}

/// A refusal names every problem where it is, and reads well on both surfaces.
fn check_refused(request: &Value, error: &Error) {
    assert_eq!(error.code(), ErrorCode::InvalidParams, "{error:?}");
    let details = error.details();
    assert!(!details.is_empty());
    for violation in details {
        assert!(!violation.message.is_empty(), "{violation:?}");
    }
    if request.is_object() {
        for violation in details {
            assert!(
                !violation.path.is_empty(),
                "no path for {violation:?} in {request}"
            );
        }
    } else {
        assert!(
            matches!(details, [only] if only.path.is_empty()),
            "{details:?}"
        );
    }
    let id = RpcId::String("create".to_owned());
    check_error_reply(
        &RpcResponse::failure(Some(id.clone()), error),
        error,
        Some(&id),
    );
    let problem = Problem::from_error(error);
    assert_eq!((problem.status, problem.errors.as_slice()), (422, details));
    assert_eq!(&problem.into_error(), error);
}
