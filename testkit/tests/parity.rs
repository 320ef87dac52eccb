//! The memory backend answers as the real server does: the same requests go
//! to the server (its REST API over HTTP, with the app's session, on a fresh
//! SQLite file of demo data) and to a memory backend made from that same
//! data, and the answers must be the same — statuses, content types, bodies —
//! but for the ids and dates of what each one makes during the test.

// Test code: a panic is how a helper reports a failed expectation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};
use sqlx::Row;
use tokio::sync::oneshot;
use toolbridge_protocol::quote::QuoteDto;
use toolbridge_server::public_urls::PublicUrls;
use toolbridge_server::tools::ToolSites;
use toolbridge_server::{AppState, router};
use toolbridge_store::Store;
use toolbridge_testkit::{MemoryBackend, Request};

/// Products in the demo catalog: enough for several pages.
const PRODUCTS: u32 = 40;

/// The real server on a fresh, seeded database.
struct Server {
    base: String,
    port: u16,
    db: std::path::PathBuf,
    client: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    _dir: tempfile::TempDir,
}

impl Server {
    async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("toolbridge.sqlite3");
        let store = Store::open(&db).await.unwrap();
        store.seed_demo(PRODUCTS).await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = AppState::new(store).serving_tools(ToolSites::new(PublicUrls::local(port)));
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            axum::serve(listener, router(state))
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Self {
            base: format!("http://127.0.0.1:{port}"),
            port,
            db,
            client: reqwest::Client::new(),
            stop: Some(stop),
            _dir: dir,
        }
    }

    /// Signs in as a demo user; the session cookie.
    async fn sign_in(&self, email: &str) -> String {
        let response = self
            .client
            .post(format!("{}/api/session", self.base))
            .header("sec-fetch-site", "same-origin")
            .json(&json!({"email": email, "password": "demo-password"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let cookie = response.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .to_owned();
        cookie.split(';').next().unwrap().to_owned()
    }

    /// A request as the host module sends it from the app's page.
    async fn send(&self, cookie: &str, call: &Call) -> Answer {
        let mut request = self
            .client
            .request(
                call.method.parse().unwrap(),
                format!("{}/api/v1{}", self.base, call.target),
            )
            .header("cookie", cookie)
            .header("sec-fetch-site", "same-origin")
            .header("accept", "application/json");
        for (name, value) in &call.headers {
            request = request.header(name, value);
        }
        if let Some(body) = &call.body {
            request = request.body(body.clone());
        }
        let response = request.send().await.unwrap();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .map(|value| value.to_str().unwrap().to_owned())
        };
        let (content_type, location, etag) =
            (header("content-type"), header("location"), header("etag"));
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        Answer {
            status,
            content_type,
            location,
            etag,
            body: (!text.is_empty()).then(|| serde_json::from_str(&text).unwrap()),
        }
    }

    fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// One request.
#[derive(Debug, Clone)]
struct Call {
    method: &'static str,
    target: String,
    headers: Vec<(String, String)>,
    body: Option<String>,
}

fn get(target: &str) -> Call {
    Call {
        method: "GET",
        target: target.to_owned(),
        headers: Vec::new(),
        body: None,
    }
}

fn with_json(method: &'static str, target: &str, body: &Value) -> Call {
    Call {
        method,
        target: target.to_owned(),
        headers: vec![("content-type".to_owned(), "application/json".to_owned())],
        body: Some(body.to_string()),
    }
}

/// An answer, as compared.
#[derive(Debug, Clone, PartialEq)]
struct Answer {
    status: u16,
    content_type: Option<String>,
    location: Option<String>,
    etag: Option<String>,
    body: Option<Value>,
}

fn from_memory(memory: &mut MemoryBackend, call: &Call) -> Answer {
    let response = memory.handle(&Request {
        method: call.method,
        target: &call.target,
        headers: &call.headers,
        body: call.body.as_deref(),
    });
    Answer {
        status: response.status,
        content_type: response.header("content-type").map(str::to_owned),
        location: response.header("location").map(str::to_owned),
        etag: response.header("etag").map(str::to_owned),
        body: response
            .body
            .as_deref()
            .filter(|text| !text.is_empty())
            .map(|text| serde_json::from_str(text).unwrap()),
    }
}

/// The fixtures that hold what the server's database holds for the demo
/// tenant, and every id and date in it.
async fn fixtures_of(server: &Server, cookie: &str, email: &str) -> (Value, HashSet<String>) {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", server.db.display()))
        .await
        .unwrap();
    let tenant = sqlx::query(
        "SELECT t.id, t.name, t.culture_code, t.default_tax_rate, t.quote_seq, u.name, u.role, \
         coalesce(u.time_zone, t.time_zone), t.currency, t.units, coalesce(u.theme, t.theme), u.id \
         FROM tenants t JOIN users u ON u.tenant_id = t.id WHERE u.email = ?",
    )
    .bind(email)
    .fetch_one(&pool)
    .await
    .unwrap();
    let tenant_id: String = tenant.get(0);
    let rows = |sql: &'static str| {
        let pool = pool.clone();
        let tenant_id = tenant_id.clone();
        async move {
            sqlx::query(sql)
                .bind(tenant_id)
                .fetch_all(&pool)
                .await
                .unwrap()
        }
    };
    let mut known = HashSet::new();
    let customers: Vec<Value> =
        rows("SELECT id, name, email, phone FROM customers WHERE tenant_id = ? ORDER BY rowid")
            .await
            .iter()
            .map(|row| {
                known.insert(row.get::<String, _>(0));
                json!({"id": row.get::<String, _>(0), "name": row.get::<String, _>(1),
               "email": row.get::<String, _>(2), "phone": row.get::<String, _>(3)})
            })
            .collect();
    let (task_templates, products) = catalog_of(&pool, &tenant_id, &mut known).await;
    let cost_items: Vec<Value> = rows(
        "SELECT id, code, name, item_type, active FROM cost_items WHERE tenant_id = ? \
         ORDER BY rowid",
    )
    .await
    .iter()
    .map(|row| {
        known.insert(row.get::<String, _>(0));
        json!({"id": row.get::<String, _>(0), "code": row.get::<String, _>(1),
               "name": row.get::<String, _>(2), "type": row.get::<String, _>(3),
               "active": row.get::<bool, _>(4)})
    })
    .collect();
    let jobs: Vec<Value> = rows(
        "SELECT id, reference, customer_id, status, closed FROM jobs WHERE tenant_id = ? \
         ORDER BY rowid",
    )
    .await
    .iter()
    .map(|row| {
        known.insert(row.get::<String, _>(0));
        json!({"id": row.get::<String, _>(0), "ref": row.get::<String, _>(1),
               "customerId": row.get::<String, _>(2), "status": row.get::<String, _>(3),
               "closed": row.get::<bool, _>(4)})
    })
    .collect();
    let ids: Vec<String> = rows("SELECT id FROM quotes WHERE tenant_id = ? ORDER BY rowid")
        .await
        .iter()
        .map(|row| row.get(0))
        .collect();
    pool.close().await;
    let quotes = quotes_of(server, cookie, &ids, &mut known).await;
    let fixtures = json!({
        "tenant": {
            "id": tenant_id,
            "name": tenant.get::<String, _>(1),
            "cultureCode": tenant.get::<String, _>(2),
            "taxRate": tenant.get::<String, _>(3),
            "quoteSequence": tenant.get::<i64, _>(4),
            "timeZone": tenant.get::<String, _>(7),
            "currency": tenant.get::<String, _>(8),
            "units": tenant.get::<String, _>(9),
            "theme": tenant.get::<String, _>(10),
        },
        "user": {"id": tenant.get::<String, _>(11), "name": tenant.get::<String, _>(5), "email": email,
                 "role": tenant.get::<String, _>(6)},
        "customers": customers,
        "taskTemplates": task_templates,
        "products": products,
        "costItems": cost_items,
        "jobs": jobs,
        "quotes": quotes,
    });
    (fixtures, known)
}

/// The task templates and products (with their task sequences) of the
/// tenant, as fixtures give them; their ids are added to `known`.
async fn catalog_of(
    pool: &sqlx::SqlitePool,
    tenant_id: &str,
    known: &mut HashSet<String>,
) -> (Vec<Value>, Vec<Value>) {
    let rows = |sql: &'static str| async move {
        sqlx::query(sql)
            .bind(tenant_id)
            .fetch_all(pool)
            .await
            .unwrap()
    };
    let templates = rows(
        "SELECT id, code, name, unit_price, cost_price, active FROM task_templates \
         WHERE tenant_id = ? ORDER BY rowid",
    )
    .await;
    let code_of: HashMap<String, String> = templates
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    let task_templates: Vec<Value> = templates
        .iter()
        .map(|row| {
            known.insert(row.get::<String, _>(0));
            json!({"id": row.get::<String, _>(0), "code": row.get::<String, _>(1),
                   "name": row.get::<String, _>(2), "unitPrice": row.get::<String, _>(3),
                   "costPrice": row.get::<String, _>(4), "active": row.get::<bool, _>(5)})
        })
        .collect();
    let mut sequences: HashMap<String, Vec<Value>> = HashMap::new();
    for row in rows(
        "SELECT pt.product_id, pt.task_template_id, pt.qty_per_unit FROM product_tasks pt \
         JOIN products p ON p.id = pt.product_id WHERE p.tenant_id = ? \
         ORDER BY pt.product_id, pt.position",
    )
    .await
    {
        sequences
            .entry(row.get(0))
            .or_default()
            .push(json!({"taskTemplate": code_of[&row.get::<String, _>(1)],
                         "qtyPerUnit": row.get::<String, _>(2)}));
    }
    let products: Vec<Value> = rows(
        "SELECT id, sku, name, unit, price, cost_price, active FROM products \
         WHERE tenant_id = ? ORDER BY rowid",
    )
    .await
    .iter()
    .map(|row| {
        let id: String = row.get(0);
        known.insert(id.clone());
        json!({"id": id, "sku": row.get::<String, _>(1), "name": row.get::<String, _>(2),
               "unit": row.get::<String, _>(3), "sellPrice": row.get::<String, _>(4),
               "costPrice": row.get::<String, _>(5), "active": row.get::<bool, _>(6),
               "taskSequence": sequences.remove(&id).unwrap_or_default()})
    })
    .collect();
    (task_templates, products)
}

/// The quotes with these ids, as fixtures give them; their ids and dates
/// are added to `known`.
async fn quotes_of(
    server: &Server,
    cookie: &str,
    ids: &[String],
    known: &mut HashSet<String>,
) -> Vec<Value> {
    let mut quotes = Vec::new();
    for id in ids {
        known.insert(id.clone());
        let answer = server.send(cookie, &get(&format!("/quotes/{id}"))).await;
        let quote: QuoteDto = serde_json::from_value(answer.body.unwrap()).unwrap();
        known.insert(quote.header.date.clone());
        quotes.push(quote_fixture(&quote));
    }
    quotes
}

/// A quote as fixtures give it.
fn quote_fixture(quote: &QuoteDto) -> Value {
    let header = &quote.header;
    let lines: Vec<Value> = quote
        .lines
        .iter()
        .map(|priced| {
            let line = &priced.line;
            let mut fixture = json!({
                "lineNo": line.line_no,
                "lineType": line.line_type.token(),
                "description": line.description,
                "qty": line.qty.to_string(),
                "unit": line.unit.token(),
                "unitPrice": line.unit_price.to_string(),
                "costPrice": line.cost_price.to_string(),
                "taxRate": line.tax_rate.to_string(),
                "groupId": line.group_id,
                "injected": line.injected,
            });
            let object = fixture.as_object_mut().unwrap();
            for (key, value) in [
                ("linkedItemId", &line.linked_item_id),
                ("productCode", &line.product_code),
                ("specification", &line.specification),
                ("location", &line.location),
                ("section", &line.section),
            ] {
                if let Some(value) = value {
                    object.insert(key.to_owned(), json!(value));
                }
            }
            if let Some(parent) = line.parent_line_no {
                object.insert("parentLineNo".to_owned(), json!(parent));
            }
            fixture
        })
        .collect();
    let mut fixture = json!({
        "id": header.id,
        "ref": header.reference,
        "customerId": header.customer_id,
        "type": header.quote_type,
        "status": header.status,
        "date": header.date,
        "expiryDays": header.expiry_days,
        "lines": lines,
        "groupKeys": quote.group_keys,
    });
    let object = fixture.as_object_mut().unwrap();
    if let Some(job) = &header.job_id {
        object.insert("jobId".to_owned(), json!(job));
    }
    if let Some(title) = &header.title {
        object.insert("title".to_owned(), json!(title));
    }
    fixture
}

/// Puts placeholders for what only one side knows: the ids it made (in the
/// order they first appear) and the dates of what it made; drops the request
/// id only the server gives.
struct Normaliser<'a> {
    known: &'a HashSet<String>,
    made: HashMap<String, String>,
}

const ID_FIELDS: [&str; 5] = [
    "id",
    "customerId",
    "customerIdGuid",
    "linkedItemId",
    "jobId",
];

impl Normaliser<'_> {
    fn answer(&mut self, mut answer: Answer) -> Answer {
        if let Some(body) = &mut answer.body {
            self.value(body);
        }
        answer.location = answer.location.map(|location| {
            let id = location.rsplit('/').next().unwrap().to_owned();
            location.replace(&id, &self.id(&id))
        });
        // Each side's own version of the index: compared by behaviour.
        answer.etag = answer
            .etag
            .map(|etag| format!("ETag of {} characters", etag.len()));
        answer
    }

    fn id(&mut self, id: &str) -> String {
        if self.known.contains(id) {
            return id.to_owned();
        }
        let next = format!("<made {}>", self.made.len() + 1);
        self.made.entry(id.to_owned()).or_insert(next).clone()
    }

    fn value(&mut self, value: &mut Value) {
        match value {
            Value::Object(object) => self.object(object),
            Value::Array(items) => items.iter_mut().for_each(|item| self.value(item)),
            _ => {}
        }
    }

    fn object(&mut self, object: &mut Map<String, Value>) {
        object.remove("requestId");
        for (key, value) in object.iter_mut() {
            match (key.as_str(), &value) {
                (field, Value::String(id)) if ID_FIELDS.contains(&field) => {
                    *value = Value::String(self.id(id));
                }
                ("date", Value::String(date)) if !self.known.contains(date) => {
                    *value = Value::String("<now>".to_owned());
                }
                _ => self.value(value),
            }
        }
    }
}

/// Sends every call to both and compares each pair of answers; answers the
/// server's, for calls that build on them.
struct Pair<'a> {
    server: &'a Server,
    cookie: String,
    memory: MemoryBackend,
    on_server: Normaliser<'a>,
    in_memory: Normaliser<'a>,
}

impl<'a> Pair<'a> {
    /// The server signed in as `cookie`, and a memory backend on `fixtures`; `known` are the
    /// ids and dates both sides hold from the start.
    fn new(
        server: &'a Server,
        cookie: String,
        fixtures: &Value,
        known: &'a HashSet<String>,
    ) -> Self {
        let normaliser = || Normaliser {
            known,
            made: HashMap::new(),
        };
        Self {
            server,
            cookie,
            memory: MemoryBackend::new(fixtures).unwrap(),
            on_server: normaliser(),
            in_memory: normaliser(),
        }
    }

    async fn same(&mut self, call: Call) -> Answer {
        let answered = self.server.send(&self.cookie, &call).await;
        let translated = self.in_memory_terms(&call);
        let remembered = from_memory(&mut self.memory, &translated);
        let by_server = self.on_server.answer(answered.clone());
        let by_memory = self.in_memory.answer(remembered);
        assert_eq!(
            by_server, by_memory,
            "{} {}: the memory backend answered otherwise than the server",
            call.method, call.target
        );
        answered
    }
}

impl Pair<'_> {
    /// `call` with the ids the server made (which the test read from its
    /// answers) replaced by the ids the memory backend made in their place.
    fn in_memory_terms(&self, call: &Call) -> Call {
        let mut call = call.clone();
        for (server_id, placeholder) in &self.on_server.made {
            let Some(memory_id) = self
                .in_memory
                .made
                .iter()
                .find_map(|(id, other)| (other == placeholder).then_some(id))
            else {
                continue;
            };
            for (from, to) in [
                (server_id.clone(), memory_id.clone()),
                (server_id.to_uppercase(), memory_id.to_uppercase()),
            ] {
                call.target = call.target.replace(&from, &to);
                call.body = call.body.map(|body| body.replace(&from, &to));
            }
        }
        call
    }
}

fn body_of(answer: &Answer) -> &Value {
    answer.body.as_ref().unwrap()
}

impl Pair<'_> {
    /// The user, and every list with its paging, ordering and refusals.
    async fn lists(&mut self) {
        self.same(get("/me")).await;
        for target in [
            "/customers",
            "/customers?page=2&pageSize=7",
            "/customers?page=99&pageSize=10",
            "/customers?page=0",
            "/customers?page=abc&pageSize=501",
            "/products?pageSize=500",
            "/products?page=3&pageSize=6",
            "/jobs",
            "/jobs?page=2&pageSize=4",
            "/quotes",
            "/quotes?page=2&pageSize=3",
            "/task-templates",
            "/task-templates?pageSize=2&page=2",
            "/task-templates?codes=INSTALL,%20UNDERLAY,,NOPE",
            "/task-templates?codes=",
            "/cost-items",
            "/cost-items?codes=TRAVEL&page=0",
            "/cost-items?pageSize=0",
        ] {
            self.same(get(target)).await;
        }
    }

    /// The catalog index, then its `ETag` again: each side's own `ETag` answers
    /// 304, another one the index.
    async fn catalog_index(&mut self) {
        let first = self.same(get("/catalog/index")).await;
        let etag_on_server = first.etag.clone().unwrap();
        let etag_in_memory = self
            .memory
            .handle(&Request {
                method: "GET",
                target: "/catalog/index",
                headers: &[],
                body: None,
            })
            .header("etag")
            .unwrap()
            .to_owned();
        let conditional = |etag: &str| Call {
            headers: vec![("if-none-match".to_owned(), etag.to_owned())],
            ..get("/catalog/index")
        };
        let not_modified = self
            .server
            .send(&self.cookie, &conditional(&etag_on_server))
            .await;
        assert_eq!(not_modified.status, 304);
        assert_eq!(
            from_memory(&mut self.memory, &conditional(&etag_in_memory)).status,
            304
        );
        assert_eq!(
            from_memory(&mut self.memory, &conditional("\"stale\"")).status,
            200
        );
    }

    /// Creating quotes: customers by job, by email (matched without regard
    /// to case, or made), new; product codes linked or free-form; the
    /// generated and the custom reference; every refusal. The server's ids
    /// of the quotes made.
    async fn create_quotes(&mut self) -> Vec<String> {
        let customers = self.same(get("/customers?pageSize=500")).await;
        let existing_email = body_of(&customers)["items"][0]["email"]
            .as_str()
            .unwrap()
            .to_uppercase();
        let jobs = self.same(get("/jobs")).await;
        let job_id = body_of(&jobs)["items"][0]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let products = self.same(get("/products?pageSize=3")).await;
        let sku = body_of(&products)["items"][1]["sku"]
            .as_str()
            .unwrap()
            .to_lowercase();
        let line = |code: Option<&str>| {
            let mut line = json!({"qty": 2.5, "unitPrice": 89.95, "taxRate": 0.15});
            if let Some(code) = code {
                line["productCode"] = json!(code);
            }
            line
        };
        let mut created = Vec::new();
        for body in [
            json!({"customerName": "Tane Parata", "title": "Lounge", "lines": [line(Some(&sku)), line(None)]}),
            json!({"customerEmail": existing_email, "upsertByEmail": true, "lines": [line(Some("NOT-A-SKU"))]}),
            json!({"customerEmail": "new.person@example.test", "upsertByEmail": true, "customerPhone": "021 555 0101",
                   "quoteRef": "CUSTOM-1", "lines": [{"description": "Survey", "qty": 1, "unitPrice": 0, "taxRate": 0}]}),
            json!({"jobId": job_id.to_uppercase(), "lines": [line(Some(&sku))]}),
        ] {
            let answer = self.same(with_json("POST", "/quotes", &body)).await;
            assert_eq!(answer.status, 201, "{body}");
            created.push(body_of(&answer)["id"].as_str().unwrap().to_owned());
        }
        for body in [
            json!({"jobId": "no-such-job", "lines": [line(None)]}),
            json!({"customerName": "Taken", "quoteRef": "CUSTOM-1", "lines": [line(None)]}),
            json!({"customerEmail": "not an email", "lines": []}),
            json!({"lines": [{"qty": 0, "unitPrice": -1}], "colour": "red"}),
        ] {
            let answer = self.same(with_json("POST", "/quotes", &body)).await;
            assert!(answer.status >= 400, "{body}");
        }
        self.same(Call {
            headers: vec![("content-type".to_owned(), "text/plain".to_owned())],
            ..with_json("POST", "/quotes", &json!({}))
        })
        .await;
        self.same(Call {
            body: Some("{not json".to_owned()),
            ..with_json("POST", "/quotes", &json!({}))
        })
        .await;
        created
    }

    /// Reading, saving and sending quote `id`, with the refusals of each.
    async fn save_and_send(&mut self, id: &str) {
        let quote = self
            .same(get(&format!("/quotes/{}", id.to_uppercase())))
            .await;
        self.same(get("/quotes/no-such-quote")).await;
        let mut lines = body_of(&quote)["lines"].clone();
        lines[0]["qty"] = json!(4);
        lines[1]["section"] = json!("Lounge");
        let save = |id: &str, body: &Value| with_json("PUT", &format!("/quotes/{id}/lines"), body);
        self.same(save(
            id,
            &json!({"lines": lines, "groupKeys": {"lounge": 1}}),
        ))
        .await;
        self.same(save(id, &json!({"lines": [{"lineNo": 1}]})))
            .await;
        self.same(save(id, &json!({"lines": lines, "extra": true})))
            .await;
        let mut bad = lines.clone();
        bad[0]["qty"] = json!(0);
        bad[1]["lineNo"] = bad[0]["lineNo"].clone();
        self.same(save(id, &json!({"lines": bad}))).await;
        self.same(save("no-such-quote", &json!({"lines": []})))
            .await;
        // A save made against a version the quote does not have is refused with its current
        // ETag; one made against any version is taken.
        let against = |tag: &str, body: &Value| {
            let mut call = save(id, body);
            call.headers.push(("if-match".to_owned(), tag.to_owned()));
            call
        };
        let refused = self
            .same(against("\"stale\"", &json!({"lines": lines})))
            .await;
        assert_eq!(refused.status, 412);
        assert!(refused.etag.is_some());
        let taken = self
            .same(against(
                "*",
                &json!({"lines": lines, "groupKeys": {"lounge": 1}}),
            ))
            .await;
        assert_eq!(taken.status, 200);
        let send = |id: &str| Call {
            method: "POST",
            ..get(&format!("/quotes/{id}/send"))
        };
        self.same(send(id)).await;
        self.same(send(id)).await;
        self.same(send("no-such-quote")).await;
        self.same(save(id, &json!({"lines": lines}))).await;
    }
}

#[tokio::test]
async fn the_memory_backend_answers_as_the_server_does() {
    let server = Server::start().await;
    let email = "office@harbour.test";
    let cookie = server.sign_in(email).await;
    let (fixtures, known) = fixtures_of(&server, &cookie, email).await;
    let mut pair = Pair::new(&server, cookie, &fixtures, &known);
    pair.lists().await;
    pair.catalog_index().await;
    let created = pair.create_quotes().await;
    pair.save_and_send(&created[0]).await;

    // What both hold afterwards.
    let all = pair.same(get("/quotes?pageSize=500")).await;
    assert_eq!(
        Some(pair.memory.quotes().len() as u64),
        body_of(&all)["totalCount"].as_u64()
    );
    pair.same(get("/customers?pageSize=500")).await;
    for id in &created {
        pair.same(get(&format!("/quotes/{id}"))).await;
    }
    server.stop();
}

#[tokio::test]
async fn a_field_user_reads_but_cannot_write_on_either() {
    let server = Server::start().await;
    let email = "field@harbour.test";
    let cookie = server.sign_in(email).await;
    let (fixtures, known) = fixtures_of(&server, &cookie, email).await;
    let mut pair = Pair::new(&server, cookie, &fixtures, &known);
    pair.same(get("/me")).await;
    let quotes = pair.same(get("/quotes")).await;
    let id = body_of(&quotes)["items"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let refused = pair
        .same(with_json(
            "POST",
            "/quotes",
            &json!({"customerName": "A", "lines": [{"qty": 1, "unitPrice": 1, "taxRate": 0}]}),
        ))
        .await;
    assert_eq!(refused.status, 403);
    pair.same(with_json(
        "PUT",
        &format!("/quotes/{id}/lines"),
        &json!({"lines": []}),
    ))
    .await;
    pair.same(Call {
        method: "POST",
        ..get(&format!("/quotes/{id}/send"))
    })
    .await;
    server.stop();
}

/// A tool's manifest as the platform takes it, asking for `permissions` (`extra`).
fn tool_manifest(short_name: &str, version: &str, permissions: &Value) -> Value {
    json!({
        "name": format!("{short_name} tool"), "shortName": short_name, "type": "standalone",
        "version": version, "description": "A test tool.", "entry": "index.html",
        "permissions": permissions,
    })
}

/// Installs a tool with `manifest` as `slug` straight into the server's database.
async fn install(server: &Server, slug: &str, manifest: &Value) {
    let store = Store::open(&server.db).await.unwrap();
    let manifest = serde_json::from_value(manifest.clone()).unwrap();
    let page: &[u8] = b"<!doctype html><title>T</title>";
    store
        .install_tool(slug, &manifest, &[("index.html", page)])
        .await
        .unwrap();
}

/// The claims of `token`, verified against `jwks` for `audience` and `issuer`, without the
/// three that differ on every token (`iat`, `exp`, `jti`), which are checked here instead.
fn verified_claims(token: &str, jwks: &Value, audience: &str, issuer: &str) -> Value {
    use jsonwebtoken::jwk::JwkSet;
    use jsonwebtoken::{Algorithm, DecodingKey, Validation};
    use toolbridge_protocol::identity::IdentityClaims;

    let set: JwkSet = serde_json::from_value(jwks.clone()).unwrap();
    let header = jsonwebtoken::decode_header(token).unwrap();
    assert_eq!(
        (header.alg, header.typ.as_deref()),
        (Algorithm::ES256, Some("JWT"))
    );
    let jwk = set.find(header.kid.as_deref().unwrap()).unwrap();
    let mut validation = Validation::new(Algorithm::ES256);
    validation.set_audience(&[audience]);
    validation.set_issuer(&[issuer]);
    validation.set_required_spec_claims(&["exp", "iat", "aud", "iss", "sub"]);
    let claims = jsonwebtoken::decode::<IdentityClaims>(
        token,
        &DecodingKey::from_jwk(jwk).unwrap(),
        &validation,
    )
    .unwrap()
    .claims;
    assert_eq!(claims.exp - claims.iat, 300);
    assert_eq!(claims.jti.len(), 36);
    let mut claims = serde_json::to_value(claims).unwrap();
    for varying in ["iat", "exp", "jti"] {
        claims.as_object_mut().unwrap().remove(varying);
    }
    claims
}

#[tokio::test]
async fn identity_tokens_say_the_same_and_are_refused_alike() {
    let server = Server::start().await;
    install(
        &server,
        "prices",
        &tool_manifest("prices", "1.4.2", &json!({"identity": true})),
    )
    .await;
    let plain = tool_manifest(
        "plain",
        "2.0.0",
        &json!({"connect": ["https://api.vendor.test"]}),
    );
    install(&server, "plain", &plain).await;
    let email = "office@harbour.test";
    let cookie = server.sign_in(email).await;
    let (mut fixtures, known) = fixtures_of(&server, &cookie, email).await;
    let issuer = format!("http://localhost:{}", server.port);
    let audience = ToolSites::new(PublicUrls::local(server.port)).origin("prices");
    fixtures["token"] = json!({"issuer": issuer, "audience": audience});
    fixtures["manifest"] = tool_manifest("prices", "1.4.2", &json!({"identity": true}));
    let mut pair = Pair::new(&server, cookie.clone(), &fixtures, &known);

    // The answers differ in their tokens only; their claims are the same but for the moment and
    // the token's own id, and each verifies against its own key set.
    let token = Call {
        method: "POST",
        ..get("/tools/prices/token")
    };
    let by_server = server.send(&cookie, &token).await;
    let by_memory = from_memory(&mut pair.memory, &token);
    assert_eq!(
        (by_server.status, &by_server.content_type),
        (by_memory.status, &by_memory.content_type)
    );
    let (on_server, in_memory) = (body_of(&by_server), body_of(&by_memory));
    let keys = |body: &Value| {
        body.as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(on_server), keys(in_memory));
    assert_eq!(on_server["expiresIn"], in_memory["expiresIn"]);
    let server_jwks: Value = server
        .client
        .get(format!("{}/.well-known/jwks.json", server.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let memory_jwks = pair.memory.jwks();
    assert_eq!(keys(&server_jwks), keys(&memory_jwks));
    assert_eq!(keys(&server_jwks["keys"][0]), keys(&memory_jwks["keys"][0]));
    assert_eq!(
        verified_claims(
            on_server["token"].as_str().unwrap(),
            &server_jwks,
            &audience,
            &issuer
        ),
        verified_claims(
            in_memory["token"].as_str().unwrap(),
            &memory_jwks,
            &audience,
            &issuer
        )
    );

    // A tool whose manifest does not ask for the permission, and a slug that names no tool.
    pair.memory = MemoryBackend::new(&json!({"manifest": plain})).unwrap();
    pair.same(Call {
        method: "POST",
        ..get("/tools/plain/token")
    })
    .await;
    pair.same(Call {
        method: "POST",
        ..get("/tools/Not_A_Slug/token")
    })
    .await;
    server.stop();
}

#[tokio::test]
async fn the_servers_fetch_is_refused_alike() {
    let server = Server::start().await;
    let mut manifest = tool_manifest(
        "prices",
        "1.0.0",
        &json!({"connect": ["https://api.vendor.test", "https://10.1.2.3"]}),
    );
    manifest["settings"] = json!([
        {"key": "region", "label": "Region", "type": "string", "default": "north"},
        {"key": "apiKey", "label": "API key", "type": "string", "secret": true}
    ]);
    install(&server, "prices", &manifest).await;
    let email = "office@harbour.test";
    let cookie = server.sign_in(email).await;
    let (mut fixtures, known) = fixtures_of(&server, &cookie, email).await;
    fixtures["manifest"] = manifest;
    let mut pair = Pair::new(&server, cookie, &fixtures, &known);
    let fetch = |request: &Value| with_json("POST", "/tools/prices/fetch", request);
    for request in [
        // An origin the manifest does not list.
        json!({"url": "https://elsewhere.test/prices", "method": "GET"}),
        // The protocol's rules, every problem at its path.
        json!({"url": "http://api.vendor.test/", "method": "get", "headers": [["Cookie", "a=b"]]}),
        json!({"url": "https://api.vendor.test/", "method": "GET", "body": {"text": "x"}}),
        json!({"url": "https://api.vendor.test/", "verb": "GET"}),
        // Placeholders: not declared, not secret, not set, a token without the permission.
        json!({"url": "https://api.vendor.test/?k={{secret.apiKey}}", "method": "POST",
               "headers": [["X-Region", "{{secret.region}}"], ["X-Other", "{{secret.nope}}"],
                           ["Authorization", "Bearer {{token}}"], ["X-Near", "{{ token }}"]],
               "body": {"text": "{{base64:{{secret.apiKey}}"}}),
        // An address that is not public.
        json!({"url": "https://10.1.2.3/prices", "method": "GET"}),
    ] {
        let answer = pair.same(fetch(&request)).await;
        assert!(answer.status >= 400, "{request}: {answer:?}");
    }
    pair.same(Call {
        headers: vec![("content-type".to_owned(), "text/plain".to_owned())],
        ..fetch(&json!({}))
    })
    .await;
    pair.same(with_json(
        "POST",
        "/tools/Not_A_Slug/fetch",
        &json!({"url": "https://api.vendor.test/", "method": "GET"}),
    ))
    .await;
    server.stop();
}
