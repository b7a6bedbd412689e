//! Property-based fuzzing (proptest) of everything that parses outside input: multipart
//! bodies, metadata profiles, access-method files, timestamps, server error bodies, and the
//! embedded target's multipart and JSON handling over HTTP. Nothing may panic; the target
//! answers malformed input with a 4xx, never a 5xx. CI runs the default case counts;
//! `PROPTEST_CASES=20000 cargo test --release --test it fuzz` is the long run
//! (docs/verify-and-cleanup.md).

use crate::common;

use std::path::Path;

use bytes::Bytes;
use ingestbench::emulator::multipart;
use ingestbench::protocol::multipart::{BOUNDARY, MultipartHead, multipart_content_type};
use proptest::prelude::*;

proptest! {
    #[test]
    fn multipart_parser_never_panics(body in proptest::collection::vec(any::<u8>(), 0..2048), boundary in "[A-Za-z0-9'()+_,-./:=?]{1,70}") {
        let _ = multipart::parse(&Bytes::from(body), &boundary);
    }

    #[test]
    fn multipart_parser_reads_back_what_the_client_writes(
        fields in proptest::collection::vec(("[a-zA-Z:_]{1,20}", "[^\\r\\n]{0,40}"), 0..8),
        file in proptest::collection::vec(any::<u8>(), 0..512),
    ) {
        let mut head = MultipartHead::new();
        for (k, v) in &fields {
            head.text(k, v);
        }
        let head = head.file("filedata", "a.bin", "application/octet-stream");
        let mut body = head.to_vec();
        body.extend_from_slice(&file);
        body.extend_from_slice(format!("\r\n--{}--\r\n", BOUNDARY).as_bytes());
        let b = multipart::boundary(multipart_content_type().to_str().unwrap()).unwrap();
        let parts = multipart::parse(&Bytes::from(body), &b).unwrap();
        prop_assert_eq!(parts.len(), fields.len() + 1);
        for ((k, v), p) in fields.iter().zip(&parts) {
            prop_assert_eq!(&p.name, k);
            prop_assert_eq!(&p.data[..], v.as_bytes());
        }
        prop_assert_eq!(&parts.last().unwrap().data[..], &file[..]);
    }

    #[test]
    fn profile_and_access_method_parsers_never_panic(text in "[ -~\\n]{0,400}") {
        let _ = ingestbench::fixtures::Profile::parse(&text, "fuzz.toml");
        let _ = ingestbench::transport::AccessMethod::parse(&text, Path::new("fuzz.toml"));
    }

    #[test]
    fn timestamps_parse_or_refuse(s in "[0-9T:.+Z-]{0,32}", ms in -62_000_000_000_000i64..253_000_000_000_000i64) {
        let _ = ingestbench::timefmt::parse_iso(&s);
        prop_assert_eq!(ingestbench::timefmt::parse_iso(&ingestbench::timefmt::datetime_ms(ms)), Some(ms));
    }

    #[test]
    fn server_error_bodies_never_panic(body in proptest::collection::vec(any::<u8>(), 0..512), status in 100u16..600) {
        let _ = ingestbench::protocol::alfresco::error_message(status, &body);
        let _ = ingestbench::protocol::liferay::error_message(status, &body);
        let _ = ingestbench::protocol::cmis::error_message(status, &body);
    }
}

/// Random multipart and JSON bodies at the embedded target's upload endpoints: never a 5xx.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn target_answers_garbage_with_4xx() {
    // One end-to-end scenario, read top to bottom.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let (target, _dir) = common::target().await;
    let base = target.http_url().unwrap();
    let c = ingestbench::reqwest_builder().build().unwrap();
    let cases: u32 = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let mut runner = TestRunner::deterministic();
    let json_strategy = "[ -~]{0,200}";
    let fields = proptest::collection::vec(("[a-zA-Z:]{1,12}", "[ -~]{0,30}"), 0..6);
    for i in 0..cases {
        let json = json_strategy.new_tree(&mut runner).unwrap().current();
        let f = fields.new_tree(&mut runner).unwrap().current();
        // Alfresco multipart with random fields (some prefixed = properties).
        let mut head = MultipartHead::new();
        for (k, v) in &f {
            head.text(k, v);
        }
        let mut body = head
            .file("filedata", &format!("f{i}.txt"), "text/plain")
            .to_vec();
        body.extend_from_slice(format!("x\r\n--{}--\r\n", BOUNDARY).as_bytes());
        let r = c
            .post(format!(
                "{base}/alfresco/api/-default-/public/alfresco/versions/1/nodes/-my-/children"
            ))
            .basic_auth("admin", Some("admin"))
            .header("content-type", multipart_content_type())
            .body(body)
            .send()
            .await
            .unwrap();
        assert!(
            r.status().as_u16() < 500,
            "alfresco multipart {f:?}: {}",
            r.status()
        );
        // JSON create with random text.
        let r = c
            .post(format!(
                "{base}/alfresco/api/-default-/public/alfresco/versions/1/nodes/-my-/children"
            ))
            .basic_auth("admin", Some("admin"))
            .header("content-type", "application/json")
            .body(json.clone())
            .send()
            .await
            .unwrap();
        assert!(
            r.status().as_u16() < 500,
            "alfresco json {json:?}: {}",
            r.status()
        );
        // Liferay: random `document` part.
        let form = reqwest::multipart::Form::new()
            .part(
                "file",
                reqwest::multipart::Part::bytes(b"x".to_vec())
                    .file_name(format!("l{i}.txt"))
                    .mime_str("text/plain")
                    .unwrap(),
            )
            .text("document", json.clone());
        let r = c
            .post(format!(
                "{base}/o/headless-delivery/v1.0/sites/guest/documents"
            ))
            .basic_auth("admin", Some("admin"))
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert!(
            r.status().as_u16() < 500,
            "liferay document {json:?}: {}",
            r.status()
        );
        // Garbage bytes claiming to be multipart.
        let r = c
            .post(format!(
                "{base}/o/headless-delivery/v1.0/sites/guest/documents"
            ))
            .basic_auth("admin", Some("admin"))
            .header("content-type", "multipart/form-data; boundary=zz")
            .body(json)
            .send()
            .await
            .unwrap();
        assert!(r.status().as_u16() < 500, "liferay garbage: {}", r.status());
    }
}
