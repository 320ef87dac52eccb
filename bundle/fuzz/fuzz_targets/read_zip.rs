//! Feeds arbitrary bytes to `read_zip`. Whatever it accepts must pack, and
//! the packed zip must read back to the same manifest and files.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(bundle) = toolbridge_bundle::read_zip(data) {
        let packed = toolbridge_bundle::pack(&bundle).expect("an accepted bundle packs");
        let again = toolbridge_bundle::read_zip(&packed).expect("a packed bundle reads back");
        assert_eq!(again.manifest(), bundle.manifest());
        assert!(again.files().eq(bundle.files()), "files differ after pack");
    }
});
