#![allow(missing_docs, clippy::unwrap_used)]
use std::time::Instant;
use toolbridge_protocol::paging::PageRequest;
#[tokio::main]
async fn main() {
    let dir = std::env::temp_dir().join(format!("tb-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = toolbridge_store::Store::open(&dir.join("b.db"))
        .await
        .unwrap();
    let t = Instant::now();
    store.seed_demo(1000).await.unwrap();
    println!("seed 1000: {:?}", t.elapsed());
    let tenant = store.default_tenant().await.unwrap().unwrap();
    let page = PageRequest::new(1, 500).unwrap();
    let n = 2000;
    let t = Instant::now();
    for _ in 0..n {
        store.products(&tenant.id, page).await.unwrap();
    }
    println!("products 500 sequential: {:?}/req", t.elapsed() / n);
    let t = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let s = store.clone();
        let id = tenant.id.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..500 {
                s.products(&id, page).await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    println!(
        "products 500 x8 concurrent: {:.0} req/s",
        4000.0 / t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    for _ in 0..200 {
        store.catalog_index(&tenant.id).await.unwrap();
    }
    println!("catalog_index: {:?}/req", t.elapsed() / 200);
    std::fs::remove_dir_all(&dir).unwrap();
}
