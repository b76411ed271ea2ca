//! The checked-in OpenAPI document describes exactly the routes the router serves.

use std::collections::BTreeSet;

#[test]
fn the_openapi_document_lists_exactly_the_routes() {
    let doc: serde_json::Value = serde_json::from_str(dogana_serve::OPENAPI).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    let mut documented = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            documented.insert((method.clone(), path.clone()));
        }
    }
    let served: BTreeSet<(String, String)> = dogana_serve::ROUTES
        .iter()
        .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
        .collect();
    assert_eq!(documented, served);
}

#[test]
fn every_error_status_documented_answers_an_error_object_with_a_listed_code() {
    let doc: serde_json::Value = serde_json::from_str(dogana_serve::OPENAPI).unwrap();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for (status, response) in op["responses"].as_object().unwrap() {
                let description = response["description"].as_str().unwrap();
                if status.starts_with('4') || status.starts_with('5') {
                    for id in description
                        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                        .filter(|w| w.starts_with("DGN-"))
                    {
                        assert!(
                            dogana_codes::by_id(id).is_some(),
                            "{method} {path} {status} names {id}, which docs/errors.md does not list"
                        );
                    }
                }
            }
        }
    }
}
