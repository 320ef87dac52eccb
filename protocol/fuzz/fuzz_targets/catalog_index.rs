//! Feeds arbitrary bytes to the catalog index's own reader and to `serde_json`: they must accept
//! the same texts, with the same index as the result, and the reader's refusal must say where
//! (a line and column, or a field's path).
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolbridge_protocol::catalog::{CatalogIndex, read_index};

fuzz_target!(|data: &[u8]| {
    let by_serde = serde_json::from_slice::<CatalogIndex>(data).ok();
    match read_index(data, "the index") {
        Ok(index) => assert_eq!(Some(index), by_serde, "only the reader accepts it"),
        Err(error) => {
            assert_eq!(by_serde, None, "only serde_json accepts it: {error}");
            let message = error.to_string();
            assert!(
                message.starts_with("the index is not JSON (")
                    || message.starts_with("the index has an unexpected shape ("),
                "{message}"
            );
        }
    }
});
