#![allow(missing_docs, clippy::unwrap_used)]
use std::time::Instant;
#[tokio::main]
async fn main() {
    let dir = std::env::temp_dir().join(format!("tb-bench2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("b.db");
    let store = toolbridge_store::Store::open(&path).await.unwrap();
    store.seed_demo(1000).await.unwrap();
    let tenant = store.default_tenant().await.unwrap().unwrap();
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let n = 1000u32;
    let t = Instant::now();
    for _ in 0..n {
        let _: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM products WHERE tenant_id = ? AND active = 1")
                .bind(&tenant.id)
                .fetch_one(&pool)
                .await
                .unwrap();
    }
    println!("count: {:?}", t.elapsed() / n);
    let t = Instant::now();
    for _ in 0..n {
        let _: Vec<(String,String,String,String,String)> = sqlx::query_as("SELECT id, sku, name, price, unit FROM products WHERE tenant_id = ? AND active = 1 ORDER BY sku, id LIMIT 500 OFFSET 0").bind(&tenant.id).fetch_all(&pool).await.unwrap();
    }
    println!("rows: {:?}", t.elapsed() / n);
    let t = Instant::now();
    for _ in 0..n {
        let s: String = sqlx::query_scalar("SELECT json_group_array(json_object('id', id, 'sku', sku, 'name', name, 'price', CAST(price AS REAL), 'unit', unit)) FROM (SELECT id, sku, name, price, unit FROM products WHERE tenant_id = ? AND active = 1 ORDER BY sku, id LIMIT 500 OFFSET 0)").bind(&tenant.id).fetch_one(&pool).await.unwrap();
        let _: Vec<toolbridge_protocol::catalog::BridgeProductDto> =
            serde_json::from_str(&s).unwrap();
    }
    println!("json + parse: {:?}", t.elapsed() / n);
    let mut conn = pool.acquire().await.unwrap();
    let t = Instant::now();
    for _ in 0..n {
        let _: Vec<(String,String,String,String,String)> = sqlx::query_as("SELECT id, sku, name, price, unit FROM products WHERE tenant_id = ? AND active = 1 ORDER BY sku, id LIMIT 500 OFFSET 0").bind(&tenant.id).fetch_all(&mut *conn).await.unwrap();
    }
    println!("rows on one conn: {:?}", t.elapsed() / n);
    let t = Instant::now();
    for _ in 0..n {
        let _ = sqlx::query("EXPLAIN QUERY PLAN SELECT 1")
            .fetch_all(&mut *conn)
            .await
            .unwrap();
    }
    println!("trivial: {:?}", t.elapsed() / n);
    let plan: Vec<(i64,i64,i64,String)> = sqlx::query_as("EXPLAIN QUERY PLAN SELECT id, sku, name, price, unit FROM products WHERE tenant_id = ? AND active = 1 ORDER BY sku, id LIMIT 500 OFFSET 0").bind(&tenant.id).fetch_all(&mut *conn).await.unwrap();
    println!("{plan:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
