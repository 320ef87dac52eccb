//! Settings in the app: an API token made on the page works over HTTP, and a hostile bundle
//! upload is refused with each entry and rule shown.

use std::io::Write;

use crate::browser::{Browser, app};
use crate::signin::sign_in;

#[tokio::test]
async fn an_admin_makes_an_api_token_that_works_over_http() {
    let browser = Browser::open().await;
    sign_in(&browser, "admin@harbour.test", "Alex Admin").await;
    browser
        .find("[data-nav=settings]")
        .await
        .click()
        .await
        .unwrap();
    browser
        .find("#key-name")
        .await
        .send_keys("ERP sync")
        .await
        .unwrap();
    for scope in ["customers-read", "quotes-read"] {
        browser
            .find(&format!("#scope-{scope}"))
            .await
            .click()
            .await
            .unwrap();
    }
    browser.press("Create key").await;
    let token = browser.text("#new-token").await;
    browser.screenshot("settings-api-tokens").await;

    let client = reqwest::Client::new();
    let answer = client
        .get(format!("{}/api/v1/customers?pageSize=1", app()))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "the new token works");
    let refused = client
        .get(format!("{}/api/v1/products?pageSize=1", app()))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403, "and has only the scopes chosen");
    browser.close().await;
}

#[tokio::test]
async fn a_hostile_bundle_upload_is_refused_naming_entry_and_rule() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("manifest.json", options).unwrap();
    zip.write_all(br#"{"name":"Hostile","shortName":"Hostile","type":"standalone","version":"1.0.0","description":"x","entry":"index.html"}"#)
        .unwrap();
    zip.start_file("index.html", options).unwrap();
    zip.write_all(b"<!doctype html>").unwrap();
    zip.start_file("setup.exe", options).unwrap();
    zip.write_all(b"MZ").unwrap();
    zip.finish().unwrap();

    let browser = Browser::open().await;
    sign_in(&browser, "admin@harbour.test", "Alex Admin").await;
    browser.go("/#/settings/tools").await;
    browser
        .find("#bundle-file")
        .await
        .send_keys(path.to_str().unwrap())
        .await
        .unwrap();
    browser.press("Upload and install").await;
    let refusal = browser.text(".refusal").await;
    assert!(refusal.contains("setup.exe"), "{refusal}");
    assert!(refusal.contains("extension"), "{refusal}");
    browser.close().await;
}
