//! Paging (DESIGN.md §4) and the `codes` rule of SPEC.md Method rule 1.

use serde_json::json;
use toolbridge_protocol::limits::MAX_PAGE_SIZE;
use toolbridge_protocol::paging::{ListRequest, PageRequest, read_list_request};

use crate::fixtures::paths;

#[test]
fn paging_defaults_to_page_1_of_50() {
    for params in [json!(null), json!({})] {
        let request = read_list_request(&params, false).unwrap();
        assert_eq!((request.paging.page(), request.paging.page_size()), (1, 50));
    }
}

#[test]
fn paging_page_size_500_is_the_maximum() {
    assert_eq!(MAX_PAGE_SIZE, 500);
    assert!(read_list_request(&json!({"pageSize": 500}), false).is_ok());
    let error = read_list_request(&json!({"pageSize": 501}), false).unwrap_err();
    assert_eq!(paths(&error), vec!["pageSize"]);
}

#[test]
fn paging_rejects_page_size_0() {
    assert!(read_list_request(&json!({"pageSize": 0}), false).is_err());
}

#[test]
fn paging_is_1_based_and_rejects_page_0() {
    let error = read_list_request(&json!({"page": 0}), false).unwrap_err();
    assert_eq!(paths(&error), vec!["page"]);
}

#[test]
fn paging_rejects_fractional_and_negative_numbers() {
    assert!(read_list_request(&json!({"page": 1.5}), false).is_err());
    assert!(read_list_request(&json!({"pageSize": -5}), false).is_err());
    assert!(read_list_request(&json!({"page": "2"}), false).is_err());
}

#[test]
fn paging_offset_counts_the_items_before_the_page() {
    assert_eq!(PageRequest::new(3, 20).unwrap().offset(), 40);
    assert_eq!(
        PageRequest::new(u32::MAX, 500).unwrap().offset(),
        (u64::from(u32::MAX) - 1) * 500
    );
}

#[test]
fn paging_from_rest_query_reports_both_bad_values() {
    let error = PageRequest::from_query(Some("abc"), Some("0")).unwrap_err();
    assert_eq!(paths(&error), vec!["page", "pageSize"]);
    let request = PageRequest::from_query(Some("2"), None).unwrap();
    assert_eq!((request.page(), request.page_size()), (2, 50));
}

#[test]
fn paging_from_rest_query_is_checked_beside_codes_then_ignored() {
    let request = ListRequest::from_query(Some("3"), Some("7"), Some("A, ,B")).unwrap();
    assert_eq!(request.codes, Some(vec!["A".to_owned(), "B".to_owned()]));
    assert_eq!(request.paging, PageRequest::default());
    let error = ListRequest::from_query(Some("true"), Some("501"), Some("A")).unwrap_err();
    assert_eq!(paths(&error), vec!["page", "pageSize"]);
}

#[test]
fn paging_envelope_keeps_the_request_and_total() {
    let page = PageRequest::new(9, 10)
        .unwrap()
        .envelope(Vec::<u8>::new(), 42);
    assert_eq!(
        serde_json::to_value(&page).unwrap(),
        json!({"items": [], "totalCount": 42, "page": 9, "pageSize": 10})
    );
}

#[test]
fn codes_when_supplied_ignore_page_and_page_size() {
    let request = read_list_request(
        &json!({"codes": ["INSTALL"], "page": 9, "pageSize": 1}),
        true,
    )
    .unwrap();
    assert_eq!(request.codes, Some(vec!["INSTALL".to_owned()]));
    assert_eq!(request.paging, PageRequest::default());
}

#[test]
fn codes_do_not_excuse_a_page_or_page_size_out_of_range() {
    let error = read_list_request(
        &json!({"codes": ["INSTALL"], "page": 0, "pageSize": 9999}),
        true,
    )
    .unwrap_err();
    assert_eq!(paths(&error), vec!["page", "pageSize"]);
    let error = read_list_request(&json!({"codes": [""], "page": 1.5}), true).unwrap_err();
    assert_eq!(paths(&error), vec!["codes[0]", "page"]);
}

#[test]
fn codes_omitted_paginate_the_full_list() {
    let request = read_list_request(&json!({"page": 2, "pageSize": 10}), true).unwrap();
    assert_eq!(request.codes, None);
    assert_eq!(request.paging.offset(), 10);
}

#[test]
fn codes_are_only_accepted_by_task_templates_and_cost_items() {
    let error = read_list_request(&json!({"codes": ["A"]}), false).unwrap_err();
    assert_eq!(paths(&error), vec!["codes"]);
}

#[test]
fn codes_must_be_non_empty_strings() {
    let error = read_list_request(&json!({"codes": ["A", 3, ""]}), true).unwrap_err();
    assert_eq!(paths(&error), vec!["codes[1]", "codes[2]"]);
}
