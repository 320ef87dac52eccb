//! The demo data: "Harbour Flooring Ltd" (the demo tenant, with a catalog
//! of any size) and "Other Co" (a second tenant for isolation checks).
//!
//! Names, codes, prices and references are the same on every run (a fixed
//! random seed); ids are fresh UUIDs.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use time::{Duration, OffsetDateTime};
use toolbridge_protocol::Decimal;
use toolbridge_protocol::add_lines::{LineType, Unit};
use toolbridge_protocol::context::Role;
use toolbridge_protocol::create_quote::NewCustomer;
use toolbridge_protocol::money::round_money;
use toolbridge_protocol::quote::{QuoteDto, QuoteHeader, QuoteLine, QuoteStatus, QuoteType};

use crate::accounts::{NewTenant, NewUser, insert_tenant, insert_user};
use crate::auth::{
    USER_COLUMNS, UserRowAnd, blocking, hash_password, password_matches, split_user_row,
    user_from_row,
};
use crate::catalog::{PRODUCTS_PER_INSERT, insert_products};
use crate::db::{Turn, Tx, insert_rows, sql};
use crate::quotes::{NEW_QUOTE_EXPIRY_DAYS, insert_customer, insert_quote};
use crate::util::{iso, new_id};
use crate::{DemoSignIn, Error, NewProduct, Store};

/// The password of every demo user.
pub const DEMO_PASSWORD: &str = "demo-password";

/// Products in the demo tenant's catalog unless told otherwise.
pub const DEFAULT_SEED_PRODUCTS: u32 = 1000;

/// Rows to one `INSERT` of products' tasks (four parameters to a row), as many as of products.
const TASKS_PER_INSERT: usize = PRODUCTS_PER_INSERT;

const HARBOUR: &str = "Harbour Flooring Ltd";
const OTHER: &str = "Other Co";

/// The demo's users of [`HARBOUR`]: email, name and role.
const HARBOUR_USERS: [(&str, &str, Role); 4] = [
    ("super@harbour.test", "Sam Super", Role::SuperUser),
    ("admin@harbour.test", "Alex Admin", Role::Admin),
    ("office@harbour.test", "Olivia Office", Role::Office),
    ("field@harbour.test", "Finn Field", Role::Field),
];

/// The demo's users of [`OTHER`].
const OTHER_USERS: [(&str, &str, Role); 1] = [("admin@other.test", "Oscar Other", Role::Admin)];

/// A product to seed.
struct ProductSeed {
    product: NewProduct,
    active: bool,
    /// (task template code, quantity per unit).
    tasks: Vec<(&'static str, Decimal)>,
}

/// Cents as a decimal: `d(8950)` is 89.50.
fn d(cents: i64) -> Decimal {
    Decimal::new(cents, 2)
}

/// A product priced in cents.
fn new_product(sku: &str, name: &str, unit: Unit, price: i64, cost: i64) -> NewProduct {
    NewProduct {
        sku: sku.to_owned(),
        name: name.to_owned(),
        unit,
        price: d(price),
        cost: d(cost),
    }
}

fn fixed_products() -> Vec<ProductSeed> {
    let product = |sku: &str, name: &str, unit, price, cost, tasks| ProductSeed {
        product: new_product(sku, name, unit, price, cost),
        active: true,
        tasks,
    };
    vec![
        product(
            "OAK-01",
            "Oak engineered board 14mm",
            Unit::SquareMetre,
            8950,
            6100,
            vec![("INSTALL", d(25)), ("UNDERLAY", d(100))],
        ),
        product(
            "VINYL-02",
            "Vinyl plank",
            Unit::SquareMetre,
            5400,
            3600,
            vec![("INSTALL", d(20))],
        ),
        product(
            "CARPET-03",
            "Wool carpet",
            Unit::SquareMetre,
            7200,
            4800,
            vec![("INSTALL", d(15)), ("UNDERLAY", d(100))],
        ),
        product(
            "TILE-04",
            "Porcelain tile 600x600",
            Unit::SquareMetre,
            6500,
            4000,
            vec![],
        ),
        product(
            "SKIRT-05",
            "Oak skirting",
            Unit::LinearMetre,
            1850,
            1100,
            vec![],
        ),
        product(
            "SEAL-06",
            "Floor sealant 5L",
            Unit::Item,
            12000,
            8000,
            vec![],
        ),
    ]
}

const FINISHES: [&str; 8] = [
    "Natural", "Smoked", "Brushed", "Matte", "Satin", "Limed", "Rustic", "Classic",
];
const MATERIALS: [&str; 12] = [
    "oak",
    "walnut",
    "bamboo",
    "maple",
    "ash",
    "slate",
    "marble",
    "travertine",
    "cork",
    "rubber",
    "nylon",
    "jute",
];
const KINDS: [(&str, Unit); 10] = [
    ("board", Unit::SquareMetre),
    ("plank", Unit::SquareMetre),
    ("tile", Unit::SquareMetre),
    ("mosaic sheet", Unit::SquareMetre),
    ("runner", Unit::LinearMetre),
    ("threshold strip", Unit::LinearMetre),
    ("stair nosing", Unit::LinearMetre),
    ("door mat", Unit::Item),
    ("adhesive 15L", Unit::Item),
    ("repair kit", Unit::Item),
];

/// The demo catalog: the fixed products, then generated ones (about 10%
/// with a task sequence, about 5% inactive).
fn harbour_products(count: u32, rng: &mut StdRng) -> Vec<ProductSeed> {
    let mut products = fixed_products();
    products.truncate(usize::try_from(count).unwrap_or(usize::MAX));
    for n in 7..=count {
        let i = usize::try_from(n).unwrap_or(0);
        let (kind, unit) = KINDS[i % KINDS.len()];
        let name = format!(
            "{} {} {kind}",
            FINISHES[(i / KINDS.len()) % FINISHES.len()],
            MATERIALS[(i * 7) % MATERIALS.len()],
        );
        let price: i64 = rng.gen_range(500..=25_000);
        let margin: i64 = rng.gen_range(55..=80);
        let tasks = if n % 10 == 0 {
            vec![("INSTALL", d(rng.gen_range(10..=40)))]
        } else {
            vec![]
        };
        products.push(ProductSeed {
            product: new_product(
                &format!("SKU-{n:05}"),
                &name,
                unit,
                price,
                price * margin / 100,
            ),
            active: n % 20 != 3,
            tasks,
        });
    }
    products
}

const FIRST_NAMES: [&str; 30] = [
    "Aroha",
    "Liam",
    "Olivia",
    "Noah",
    "Charlotte",
    "Jack",
    "Isla",
    "Oliver",
    "Amelia",
    "Leo",
    "Mia",
    "Hunter",
    "Ava",
    "George",
    "Harper",
    "Nikau",
    "Ruby",
    "Mason",
    "Lily",
    "Thomas",
    "Grace",
    "William",
    "Sophie",
    "James",
    "Ella",
    "Tama",
    "Zoe",
    "Lucas",
    "Chloe",
    "Ethan",
];
const SURNAMES: [&str; 30] = [
    "Ngata", "Smith", "Williams", "Brown", "Wilson", "Taylor", "Jones", "Walker", "Thompson",
    "Anderson", "White", "Harris", "Martin", "Clarke", "Young", "Parata", "Robinson", "King",
    "Wright", "Campbell", "Scott", "Edwards", "Mitchell", "Hughes", "Tawhiri", "Cooper", "Morgan",
    "Baker", "Kelly", "Reid",
];
const COMPANIES: [(&str, &str); 24] = [
    ("Kauri Property Management", "kauriproperty"),
    ("Ponsonby Dental Clinic", "ponsonbydental"),
    ("Harbourview Apartments Body Corporate", "harbourview"),
    ("Southern Cross Rentals", "southerncross"),
    ("Totara Early Learning", "totaralearning"),
    ("Wellington Boutique Hotels", "wgtnhotels"),
    ("Coastline Cafe", "coastlinecafe"),
    ("Rimu Builders Ltd", "rimubuilders"),
    ("Mt Eden Physio", "mtedenphysio"),
    ("Lakeside Lodge", "lakesidelodge"),
    ("Pohutukawa Retirement Village", "pohutukawa"),
    ("Northshore Motors", "northshoremotors"),
    ("Green Fern Offices", "greenfern"),
    ("Bayside Church Trust", "baysidechurch"),
    ("Kowhai Law", "kowhailaw"),
    ("Tui Street Bakery", "tuibakery"),
    ("Summit Fitness", "summitfitness"),
    ("Aotea Accounting", "aotea"),
    ("Matai Medical Centre", "mataimedical"),
    ("Westgate Storage", "westgatestorage"),
    ("Karaka Vineyard", "karakavineyard"),
    ("Riverbend School", "riverbend"),
    ("Seaview Motel", "seaviewmotel"),
    ("Harakeke Design Studio", "harakeke"),
];

/// (name, email, phone) of the demo tenant's customers: 30 people and 24
/// organisations.
fn harbour_customers() -> Vec<(String, String, String)> {
    let mut customers = Vec::new();
    for (i, first) in FIRST_NAMES.iter().enumerate() {
        let last = SURNAMES[(i * 7 + 3) % SURNAMES.len()];
        let domain = ["mail.test", "inbox.test", "post.test"][i % 3];
        customers.push((
            format!("{first} {last}"),
            format!("{}.{}@{domain}", first.to_lowercase(), last.to_lowercase()),
            format!("021 555 {:04}", 1000 + i * 37),
        ));
    }
    for (i, (name, domain)) in COMPANIES.iter().enumerate() {
        customers.push((
            (*name).to_owned(),
            format!("office@{domain}.test"),
            format!("09 555 {:04}", 2000 + i * 53),
        ));
    }
    customers
}

const STAGES: [&str; 7] = [
    "Pending",
    "Pricing",
    "Stock",
    "Scheduling",
    "In Progress",
    "Completed",
    "Invoiced",
];

/// What one tenant is seeded with.
struct TenantSeed {
    name: &'static str,
    culture_code: &'static str,
    /// Its time zone, currency and units.
    context: (&'static str, &'static str, &'static str),
    tax_rate: Decimal,
    users: Vec<(&'static str, &'static str, Role)>,
    customers: Vec<(String, String, String)>,
    products: Vec<ProductSeed>,
    /// (code, name, sell, cost, active).
    templates: Vec<(&'static str, &'static str, Decimal, Decimal, bool)>,
    /// (code, name, type, active).
    cost_items: Vec<(&'static str, &'static str, &'static str, bool)>,
    jobs: usize,
    /// Which jobs are closed (by index).
    closed_jobs: Vec<usize>,
    quotes: usize,
}

fn harbour(products: u32, rng: &mut StdRng) -> TenantSeed {
    TenantSeed {
        name: HARBOUR,
        culture_code: "en-NZ",
        context: ("Pacific/Auckland", "NZD", "metric"),
        tax_rate: d(15),
        users: HARBOUR_USERS.to_vec(),
        customers: harbour_customers(),
        products: harbour_products(products, rng),
        templates: vec![
            ("INSTALL", "Installation", d(4500), d(3000), true),
            ("UNDERLAY", "Underlay", d(650), d(400), true),
            ("REMOVE_OLD", "Remove old flooring", d(1200), d(800), true),
            ("SEAL", "Sealing", d(900), d(500), true),
            ("LEGACY_PREP", "Legacy prep", d(1000), d(700), false),
        ],
        cost_items: vec![
            ("TRAVEL", "Travel", "T_TRAVEL", true),
            ("DISPOSAL", "Waste disposal", "T_DISPOSAL", true),
            ("SITE_VISIT", "Site visit", "T_SITE_VISIT", true),
            ("FINANCE", "Finance fee", "T_FINANCIAL", true),
            ("OLD_FEE", "Old fee", "T_FINANCIAL", false),
        ],
        jobs: 30,
        closed_jobs: vec![9, 19, 29],
        quotes: 20,
    }
}

fn other_co() -> TenantSeed {
    let product = |sku: &str, name: &str, unit, price, cost, active| ProductSeed {
        product: new_product(sku, name, unit, price, cost),
        active,
        tasks: vec![],
    };
    TenantSeed {
        name: OTHER,
        culture_code: "en-AU",
        context: ("Australia/Perth", "AUD", "metric"),
        tax_rate: d(10),
        users: OTHER_USERS.to_vec(),
        customers: vec![
            (
                "Bondi Builders".to_owned(),
                "jobs@bondibuilders.test".to_owned(),
                "02 5550 1001".to_owned(),
            ),
            (
                "Jane Citizen".to_owned(),
                "jane.citizen@mail.test".to_owned(),
                "0400 555 102".to_owned(),
            ),
            (
                "Parramatta Pharmacy".to_owned(),
                "office@parrapharmacy.test".to_owned(),
                "02 5550 1003".to_owned(),
            ),
            (
                "Wattle Cottage".to_owned(),
                "stay@wattlecottage.test".to_owned(),
                "0400 555 104".to_owned(),
            ),
            (
                "Kim Nguyen".to_owned(),
                "kim.nguyen@inbox.test".to_owned(),
                "0400 555 105".to_owned(),
            ),
        ],
        products: vec![
            product(
                "OAK-01",
                "Oak board (Other Co)",
                Unit::SquareMetre,
                9900,
                7000,
                true,
            ),
            product(
                "VINYL-02",
                "Vinyl plank (Other Co)",
                Unit::SquareMetre,
                5900,
                4000,
                true,
            ),
            product(
                "CARPET-03",
                "Carpet (Other Co)",
                Unit::SquareMetre,
                6900,
                4500,
                true,
            ),
            product(
                "OC-004",
                "Bamboo strand board",
                Unit::SquareMetre,
                7900,
                5200,
                true,
            ),
            product(
                "OC-005",
                "Timber scotia",
                Unit::LinearMetre,
                1200,
                700,
                true,
            ),
            product("OC-006", "Floor cleaner 1L", Unit::Item, 2500, 1400, true),
            product("OC-007", "Cork underlay roll", Unit::Item, 8900, 6000, true),
            product(
                "OC-008",
                "Retired laminate",
                Unit::SquareMetre,
                3900,
                2500,
                false,
            ),
        ],
        templates: vec![("INSTALL", "Installation", d(5000), d(3500), true)],
        cost_items: vec![("TRAVEL", "Travel", "T_TRAVEL", true)],
        jobs: 3,
        closed_jobs: vec![],
        quotes: 3,
    }
}

/// An active product as seeded: (id, sku, name, unit, price, cost).
type SeededProduct = (String, String, String, Unit, Decimal, Decimal);

/// Ids of what was seeded for a tenant, for the rows that refer to them.
struct Seeded {
    customers: Vec<String>,
    /// Active products.
    products: Vec<SeededProduct>,
    /// (id, customer id).
    jobs: Vec<(String, String)>,
}

impl Store {
    /// Seeds the demo data in one transaction and returns the demo sign-ins.
    /// `products` is the size of the demo tenant's catalog
    /// ([`DEFAULT_SEED_PRODUCTS`] by default). Refuses ([`Error::NotEmpty`])
    /// when the database already holds a tenant: of several processes
    /// seeding one database at once, one seeds and the others are refused.
    pub async fn seed_demo(&self, products: u32) -> Result<Vec<DemoSignIn>, Error> {
        let mut rng = StdRng::seed_from_u64(0x7001_b41d);
        let tenants = [harbour(products, &mut rng), other_co()];
        // One hash for each user, as a user made by hand would have.
        let mut hashes = BTreeMap::new();
        for tenant in &tenants {
            for (email, _, _) in &tenant.users {
                hashes.insert(*email, hash_password(DEMO_PASSWORD).await?);
            }
        }

        let mut tx = self.begin_write().await?;
        // Instances starting together on one empty PostgreSQL database: one seeds, and the
        // others find its tenants.
        tx.take_turn(Turn::Setup).await?;
        let seeded: bool = sql("SELECT EXISTS (SELECT 1 FROM tenants)")
            .fetch_scalar(&mut *tx)
            .await?;
        if seeded {
            return Err(Error::NotEmpty);
        }
        let mut sign_ins = Vec::new();
        for tenant in &tenants {
            let new_tenant = NewTenant {
                name: tenant.name.to_owned(),
                culture_code: tenant.culture_code.to_owned(),
                default_tax_rate: tenant.tax_rate,
            };
            let tenant_id = insert_tenant(&mut tx, &new_tenant).await?;
            let (time_zone, currency, units) = tenant.context;
            sql("UPDATE tenants SET time_zone = $1, currency = $2, units = $3 WHERE id = $4")
                .bind(time_zone)
                .bind(currency)
                .bind(units)
                .bind(tenant_id.as_str())
                .execute(&mut *tx)
                .await?;
            for (email, name, role) in &tenant.users {
                let user = NewUser {
                    email: (*email).to_owned(),
                    name: (*name).to_owned(),
                    role: *role,
                };
                // Inserted here, in the seed's one transaction, and so past the password policy
                // of `Store::create_user`: the demo password is published (README, the book, sign-in page),
                // which suits demo data, made for trying toolbridge on one's own machine only.
                let hash = hashes.get(email).map_or("", String::as_str);
                insert_user(&mut tx, &tenant_id, &user, hash).await?;
                sign_ins.push(DemoSignIn {
                    email: (*email).to_owned(),
                    password: DEMO_PASSWORD.to_owned(),
                    role: *role,
                    tenant_name: tenant.name.to_owned(),
                });
            }
            let seeded = seed_tenant_rows(&mut tx, &tenant_id, tenant).await?;
            seed_quotes(&mut tx, &tenant_id, tenant, &seeded, &mut rng).await?;
        }
        tx.commit().await?;
        Ok(sign_ins)
    }

    /// The demo's sign-ins that still let someone in: each user [`Store::seed_demo`] made who
    /// is still there, active, and has the demo password, in the seed's order. Empty on a
    /// database without demo data (the usual production one), which is how the app's sign-in
    /// page knows whether to offer them. Whether a hash is the demo password's is checked once
    /// per hash this process meets, so a page's every load costs one read.
    pub async fn demo_sign_ins(&self) -> Result<Vec<DemoSignIn>, Error> {
        let demo: Vec<&str> = HARBOUR_USERS
            .iter()
            .chain(&OTHER_USERS)
            .map(|(email, _, _)| *email)
            .collect();
        let placeholders: Vec<String> = (1..=demo.len()).map(|n| format!("${n}")).collect();
        let query = format!(
            "SELECT {USER_COLUMNS}, u.password_hash FROM users u \
             JOIN tenants t ON t.id = u.tenant_id \
             WHERE u.active = 1 AND u.email_lower IN ({})",
            placeholders.join(", ")
        );
        let rows: Vec<UserRowAnd<String>> = demo
            .iter()
            .fold(sql(query), |query, email| query.bind(*email))
            .fetch_all(&self.pool)
            .await?;
        let mut users = Vec::with_capacity(rows.len());
        let mut hashes = Vec::with_capacity(rows.len());
        for row in rows {
            let (user, hash) = split_user_row(row);
            users.push(user_from_row(user)?);
            hashes.push(hash);
        }
        let still_demo = self.demo_hashes.check(hashes).await?;
        let mut sign_ins: Vec<DemoSignIn> = users
            .into_iter()
            .zip(still_demo)
            .filter_map(|(user, still_demo)| {
                still_demo.then(|| DemoSignIn {
                    email: user.email,
                    password: DEMO_PASSWORD.to_owned(),
                    role: user.role,
                    tenant_name: user.tenant_name,
                })
            })
            .collect();
        sign_ins.sort_by_key(|sign_in| demo.iter().position(|email| *email == sign_in.email));
        Ok(sign_ins)
    }
}

/// Which password hashes the demo password matches, remembered by hash. A changed password has a
/// new hash (a fresh salt), so what is remembered never goes stale; only the hashes of the last
/// check are kept.
#[derive(Debug, Default)]
pub(crate) struct DemoHashes(Mutex<HashMap<String, bool>>);

impl DemoHashes {
    /// For each hash, whether the demo password matches it: argon2 for the hashes not met
    /// before, off the async threads.
    async fn check(&self, hashes: Vec<String>) -> Result<Vec<bool>, Error> {
        let known = self.known();
        let unknown: Vec<String> = hashes
            .iter()
            .filter(|hash| !known.contains_key(*hash))
            .cloned()
            .collect();
        let checked = if unknown.is_empty() {
            HashMap::new()
        } else {
            blocking(move || {
                unknown
                    .into_iter()
                    .map(|hash| {
                        let matches = password_matches(DEMO_PASSWORD, &hash);
                        (hash, matches)
                    })
                    .collect::<HashMap<_, _>>()
            })
            .await?
        };
        let answers = hashes
            .iter()
            .map(|hash| {
                known
                    .get(hash)
                    .or_else(|| checked.get(hash))
                    .copied()
                    .unwrap_or(false)
            })
            .collect();
        let mut kept = known;
        kept.extend(checked);
        kept.retain(|hash, _| hashes.contains(hash));
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = kept;
        Ok(answers)
    }

    /// What is remembered, copied out of the lock.
    fn known(&self) -> HashMap<String, bool> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

async fn seed_tenant_rows(
    tx: &mut Tx,
    tenant_id: &str,
    tenant: &TenantSeed,
) -> Result<Seeded, Error> {
    let mut seeded = Seeded {
        customers: Vec::new(),
        products: Vec::new(),
        jobs: Vec::new(),
    };
    for (name, email, phone) in &tenant.customers {
        let customer = NewCustomer {
            name: name.clone(),
            email: email.clone(),
            phone: phone.clone(),
        };
        seeded
            .customers
            .push(insert_customer(tx, tenant_id, &customer).await?);
    }

    seeded.products = seed_catalog(tx, tenant_id, tenant).await?;

    for i in 0..tenant.jobs {
        let id = new_id();
        let Some(customer) = seeded
            .customers
            .get((i * 3) % seeded.customers.len().max(1))
        else {
            break;
        };
        let closed = tenant.closed_jobs.contains(&i);
        sql(
            "INSERT INTO jobs (id, tenant_id, reference, customer_id, status, closed) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&id)
        .bind(tenant_id)
        .bind(format!("J-{:04}", i + 1))
        .bind(customer)
        .bind(if closed {
            "Closed"
        } else {
            STAGES[i % STAGES.len()]
        })
        .bind(closed)
        .execute(&mut *tx)
        .await?;
        seeded.jobs.push((id, customer.clone()));
    }
    Ok(seeded)
}

/// The tenant's task templates, cost items and products; answers the active
/// products.
async fn seed_catalog(
    tx: &mut Tx,
    tenant_id: &str,
    tenant: &TenantSeed,
) -> Result<Vec<SeededProduct>, Error> {
    let mut template_ids = BTreeMap::new();
    for (code, name, sell, cost, active) in &tenant.templates {
        let id = new_id();
        sql(
            "INSERT INTO task_templates (id, tenant_id, code, name, unit_price, cost_price, \
             active) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&id)
        .bind(tenant_id)
        .bind(*code)
        .bind(*name)
        .bind(sell.to_string())
        .bind(cost.to_string())
        .bind(*active)
        .execute(&mut *tx)
        .await?;
        template_ids.insert(*code, id);
    }
    for (code, name, item_type, active) in &tenant.cost_items {
        sql(
            "INSERT INTO cost_items (id, tenant_id, code, name, item_type, active) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(new_id())
        .bind(tenant_id)
        .bind(*code)
        .bind(*name)
        .bind(*item_type)
        .bind(*active)
        .execute(&mut *tx)
        .await?;
    }

    seed_products(tx, tenant_id, &tenant.products, &template_ids).await
}

/// The products of a tenant's catalog, with their tasks (`template_ids` maps a task template's
/// code to its id); answers the active ones.
async fn seed_products(
    tx: &mut Tx,
    tenant_id: &str,
    products: &[ProductSeed],
    template_ids: &BTreeMap<&str, String>,
) -> Result<Vec<SeededProduct>, Error> {
    let rows: Vec<(String, &ProductSeed)> =
        products.iter().map(|product| (new_id(), product)).collect();
    let products: Vec<(String, &NewProduct, bool)> = rows
        .iter()
        .map(|(id, seed)| (id.clone(), &seed.product, seed.active))
        .collect();
    insert_products(tx, tenant_id, &products).await?;
    let tasks: Vec<(&String, i64, &String, Decimal)> =
        rows.iter()
            .flat_map(|(id, product)| {
                product.tasks.iter().enumerate().filter_map(
                    move |(position, (code, qty_per_unit))| {
                        let template_id = template_ids.get(code)?;
                        Some((
                            id,
                            i64::try_from(position).unwrap_or(i64::MAX),
                            template_id,
                            *qty_per_unit,
                        ))
                    },
                )
            })
            .collect();
    for chunk in tasks.chunks(TASKS_PER_INSERT) {
        let mut insert = sql(insert_rows(
            "INSERT INTO product_tasks (product_id, position, task_template_id, qty_per_unit)",
            4,
            chunk.len(),
        ))
        .once();
        for (id, position, template_id, qty_per_unit) in chunk {
            insert.push_bind(id.as_str());
            insert.push_bind(*position);
            insert.push_bind(template_id.as_str());
            insert.push_bind(qty_per_unit.to_string());
        }
        insert.execute(&mut *tx).await?;
    }
    Ok(rows
        .into_iter()
        .filter(|(_, seed)| seed.active)
        .map(|(id, seed)| {
            let product = &seed.product;
            (
                id,
                product.sku.clone(),
                product.name.clone(),
                product.unit,
                product.price,
                product.cost,
            )
        })
        .collect())
}

/// Line `n` of a demo quote: of `product`, or a free-form service line.
fn demo_line(
    line_no: u32,
    n: usize,
    product: Option<&SeededProduct>,
    qty: Decimal,
    tax_rate: Decimal,
) -> QuoteLine {
    match product {
        Some((id, sku, name, unit, price, cost)) => QuoteLine {
            line_no,
            line_type: LineType::Product,
            linked_item_id: Some(id.clone()),
            product_code: Some(sku.clone()),
            description: name.clone(),
            specification: None,
            location: Some(["Lounge", "Kitchen", "Hallway", "Bedroom 1"][n % 4].to_owned()),
            qty: round_money(qty),
            unit: *unit,
            unit_price: *price,
            cost_price: *cost,
            tax_rate,
            section: None,
            group_id: 0,
            injected: false,
            parent_line_no: None,
        },
        None => QuoteLine {
            line_no,
            line_type: LineType::Product,
            linked_item_id: None,
            product_code: None,
            description: "Furniture moving".to_owned(),
            specification: None,
            location: None,
            qty: Decimal::ONE,
            unit: Unit::Item,
            unit_price: d(8000),
            cost_price: d(8000),
            tax_rate,
            section: None,
            group_id: 0,
            injected: false,
            parent_line_no: None,
        },
    }
}

async fn seed_quotes(
    tx: &mut Tx,
    tenant_id: &str,
    tenant: &TenantSeed,
    seeded: &Seeded,
    rng: &mut StdRng,
) -> Result<(), Error> {
    let now = OffsetDateTime::now_utc();
    // The fixed products first, so that demo quotes look like flooring jobs.
    let pick_from = seeded.products.len().min(12);
    for i in 0..tenant.quotes {
        let status = QuoteStatus::ALL[i % QuoteStatus::ALL.len()];
        let job = if i % 2 == 0 { seeded.jobs.get(i) } else { None };
        let customer_id = match job {
            Some((_, customer)) => customer.clone(),
            None => match seeded
                .customers
                .get((i * 5 + 1) % seeded.customers.len().max(1))
            {
                Some(customer) => customer.clone(),
                None => continue,
            },
        };
        let ago = i64::try_from((tenant.quotes - i) * 2).unwrap_or(0);
        let date = now - Duration::days(ago) - Duration::hours(i64::try_from(i % 7).unwrap_or(0));
        let mut lines = Vec::new();
        for n in 0..=(i % 6) {
            let line_no = u32::try_from(n + 1).unwrap_or(u32::MAX);
            let qty = d(rng.gen_range(100..=4000));
            let product = seeded.products.get(rng.gen_range(0..pick_from.max(1)));
            let line = demo_line(line_no, n, product.filter(|_| n < 5), qty, tenant.tax_rate);
            lines.push(line);
        }
        let header = QuoteHeader {
            id: new_id(),
            reference: format!("Q-{}", 1001 + i),
            customer_id,
            customer_name: String::new(),
            job_id: job.map(|(id, _)| id.clone()),
            title: Some(format!("Flooring quote {}", i + 1)),
            quote_type: if i % 4 == 3 {
                QuoteType::Estimate
            } else {
                QuoteType::Quote
            },
            status,
            date: iso(date),
            expiry_days: NEW_QUOTE_EXPIRY_DAYS,
        };
        insert_quote(
            tx,
            tenant_id,
            &QuoteDto::new(header, lines, BTreeMap::new()),
        )
        .await?;
    }
    sql("UPDATE tenants SET quote_seq = $1 WHERE id = $2")
        .bind(1000 + i64::try_from(tenant.quotes).unwrap_or(0))
        .bind(tenant_id)
        .execute(&mut *tx)
        .await?;
    Ok(())
}
