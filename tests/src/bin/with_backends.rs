//! `with-backends SUITE [OPTIONS] -- COMMAND...`: placeholder replaced below.
fn main() {}
