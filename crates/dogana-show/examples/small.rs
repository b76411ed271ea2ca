//! Writes the page of the small history (the docs' screenshot) to the path given.
#[path = "../tests/common/mod.rs"]
mod common;

fn main() {
    let path = std::env::args().nth(1).expect("usage: small PATH.html");
    let page =
        dogana_show::render(&[common::small("orders").history()], &common::options()).unwrap();
    std::fs::write(path, page).unwrap();
}
