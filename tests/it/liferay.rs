//! Liferay headless-delivery: the client's requests and the embedded target's answers
//! against `tests/specs/liferay/headless-delivery-documents.yaml`, a 300-document run read
//! back by id with its metadata, and OAuth2 token expiry survived mid-run.

use crate::common;

use base64::Engine;
use clap::Parser;
use ingestbench::cli::{Cli, Command};
use ingestbench::emulator::multipart;
use ingestbench::results::manifest::{Manifest, ManifestEntry};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn spec() -> Value {
    common::spec("liferay/headless-delivery-documents.yaml")
}

fn schema(s: &Value, name: &str) -> Value {
    s["components"]["schemas"][name].clone()
}

fn run_args(args: &[&str]) -> ingestbench::plan::options::RunArgs {
    let mut v = vec![
        "ingestbench",
        "run",
        "--quiet",
        "--warmup",
        "0",
        "--protocol",
        "liferay",
    ];
    v.extend_from_slice(args);
    match Cli::try_parse_from(v).unwrap().command {
        Command::Run(a) => a,
        _ => unreachable!(),
    }
}

/// Does `path` match a spec path template (with `{param}` segments) for `method`?
fn spec_op<'a>(s: &'a Value, path: &str, method: &str) -> Option<&'a Value> {
    let rel = path.strip_prefix("/o/headless-delivery")?;
    let rel = rel.split('?').next()?;
    s["paths"].as_object()?.iter().find_map(|(tmpl, ops)| {
        let a: Vec<&str> = tmpl.split('/').collect();
        let b: Vec<&str> = rel.split('/').collect();
        (a.len() == b.len() && a.iter().zip(&b).all(|(t, p)| t.starts_with('{') || t == p))
            .then(|| ops.get(method))
            .flatten()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_sends_what_the_spec_declares() {
    // One end-to-end scenario, read top to bottom.
    let s = spec();
    let (url, seen) = common::capture(|method, _, n| {
        if method == "GET" {
            (
                "200 OK",
                json!({"items": [], "page": 1, "pageSize": 1, "lastPage": 1, "totalCount": 0})
                    .to_string(),
            )
        } else {
            ("200 OK", json!({"id": 100 + n, "name": "x"}).to_string())
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let pw = common::password_file(dir.path(), "test");
    let (outcome, _) = ingestbench::run_command(&run_args(&[
        "--url",
        &url,
        "--user",
        "test@liferay.com",
        "--password-file",
        pw.to_str().unwrap(),
        "--docs",
        "3",
        "--threads",
        "1",
        "--runs",
        "1",
        "--results-dir",
        dir.path().to_str().unwrap(),
    ]))
    .await
    .unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    let seen = seen.lock().unwrap();
    let doc_schema = schema(&s, "Document");
    let mut uploads = 0;
    for (method, path, headers, body) in seen.iter() {
        let op = spec_op(&s, path, &method.to_lowercase())
            .unwrap_or_else(|| panic!("{method} {path} is not in the spec"));
        let h = |k: &str| {
            headers
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
                .unwrap_or("")
        };
        assert!(h("authorization").starts_with("Basic "));
        if path.ends_with("/documents") && method == "POST" {
            uploads += 1;
            assert_eq!(
                op["requestBody"]["$ref"],
                json!("#/components/requestBodies/DocumentMultipart")
            );
            let boundary = multipart::boundary(h("content-type")).expect("multipart/form-data");
            let parts = multipart::parse(body, &boundary).unwrap();
            let names: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
            assert_eq!(
                names,
                vec!["document", "file"],
                "exactly the declared parts"
            );
            let file = &parts[1];
            assert!(file.filename.is_some());
            let ext = file
                .filename
                .as_deref()
                .unwrap()
                .rsplit('.')
                .next()
                .unwrap();
            let want = match ext {
                "pdf" => "application/pdf",
                "xml" => "text/xml",
                _ => "text/plain",
            };
            assert_eq!(
                file.content_type.as_deref(),
                Some(want),
                "the file part carries its real type"
            );
            let d: Value = serde_json::from_slice(&parts[0].data).expect("document is JSON");
            common::assert_valid(&s, &doc_schema, &d);
            let declared = doc_schema["properties"].as_object().unwrap();
            for k in d.as_object().unwrap().keys() {
                assert!(declared.contains_key(k), "document field {k} is declared");
            }
            assert_eq!(d["fileName"], json!(file.filename.clone().unwrap()));
            assert_eq!(d["viewableBy"], json!("Anyone"));
            assert!(
                d["externalReferenceCode"].is_string()
                    && d["customFields"].as_array().unwrap().len() == 5
            );
            assert_eq!(
                d["documentType"]["contentFields"].as_array().unwrap().len(),
                5
            );
        } else if method == "POST" {
            let d: Value = serde_json::from_slice(body).unwrap();
            common::assert_valid(&s, &schema(&s, "DocumentFolder"), &d);
        }
    }
    assert_eq!(uploads, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_target_answers_like_liferay() {
    // One end-to-end scenario, read top to bottom.
    let s = spec();
    let (target, _dir) = common::target().await;
    let base = format!("{}/o/headless-delivery/v1.0", target.http_url().unwrap());
    let c = ingestbench::reqwest_builder().build().unwrap();
    let auth = |r: reqwest::RequestBuilder| r.basic_auth("admin", Some("admin"));
    let f = auth(c.post(format!("{base}/sites/guest/document-folders")))
        .json(&json!({"name": "f1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(f.status(), 200);
    let fv: Value = f.json().await.unwrap();
    common::assert_valid(&s, &schema(&s, "DocumentFolder"), &fv);
    let fid = fv["id"].as_i64().unwrap();
    let dup = auth(c.post(format!("{base}/sites/guest/document-folders")))
        .json(&json!({"name": "f1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(dup.status(), 409);
    let form = |file: &str, doc: Option<&str>| {
        let mut f = reqwest::multipart::Form::new().part(
            "file",
            reqwest::multipart::Part::bytes(b"hello".to_vec())
                .file_name(file.to_string())
                .mime_str("text/plain")
                .unwrap(),
        );
        if let Some(d) = doc {
            f = f.text("document", d.to_string());
        }
        f
    };
    let url = format!("{base}/document-folders/{fid}/documents");
    let ok = auth(c.post(&url)).multipart(form("a.txt", Some(r#"{"title":"A","customFields":[{"name":"caseNumber","customValue":{"data":7}}],"documentType":{"name":"Nope","contentFields":[]}}"#))).send().await.unwrap();
    assert_eq!(ok.status(), 200, "200, not 201");
    let dv: Value = ok.json().await.unwrap();
    common::assert_valid(&s, &schema(&s, "Document"), &dv);
    assert_eq!(
        (
            dv["title"].as_str(),
            dv["encodingFormat"].as_str(),
            dv["sizeInBytes"].as_i64()
        ),
        (Some("A"), Some("text/plain"), Some(5))
    );
    assert!(
        dv.get("documentType").is_none(),
        "an unknown document type is dropped silently"
    );
    for (file, doc, want) in [
        ("b.txt", Some(r#"{"title":"A"}"#), 409),     // title clash
        ("a.txt", Some(r#"{"title":"B"}"#), 409),     // file name clash
        ("c.txt", Some(r#"{"title": "#), 400),        // malformed JSON
        ("d.txt", Some(r#"{"bogus": 1}"#), 400),      // unknown property
        ("e.txt", Some(r#"{"keywords": "x"}"#), 400), // wrong type
    ] {
        let r = auth(c.post(&url))
            .multipart(form(file, doc))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), want, "{file} {doc:?}");
        let p: Value = r.json().await.unwrap();
        assert!(
            p["status"].is_string() && p["title"].is_string(),
            "a Problem: {p}"
        );
    }
    // Guest (no or an expired token): writes 403, lists empty, never 401.
    let r = c
        .post(&url)
        .multipart(form("g.txt", None))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let r = c.get(&url).bearer_auth("expired").send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["totalCount"], json!(0));
    // Read back, list, by ERC, delete.
    let id = dv["id"].as_i64().unwrap();
    let g: Value = auth(c.get(format!("{base}/documents/{id}?nestedFields=contentValue")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(g["contentValue"].as_str().unwrap())
            .unwrap(),
        b"hello"
    );
    let page: Value = auth(c.get(&url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    common::assert_valid(&s, &schema(&s, "PageDocument"), &page);
    assert_eq!(page["totalCount"], json!(1));
    let erc = dv["externalReferenceCode"].as_str().unwrap();
    assert_eq!(
        auth(c.get(format!(
            "{base}/sites/20117/documents/by-external-reference-code/{erc}"
        )))
        .send()
        .await
        .unwrap()
        .status(),
        200
    );
    assert_eq!(
        auth(c.get(format!("{base}/sites/nope/documents")))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    assert_eq!(
        auth(c.delete(format!("{base}/documents/{id}")))
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    assert_eq!(
        auth(c.get(format!("{base}/documents/{id}")))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
}

/// Reads every manifest document back by id and checks name, size, content and metadata.
async fn read_back(base: &str, user: (&str, &str), manifest: &[ManifestEntry]) {
    let c = ingestbench::reqwest_builder().build().unwrap();
    for e in manifest {
        assert!(e.ok);
        let d: Value = c
            .get(format!(
                "{base}/o/headless-delivery/v1.0/documents/{}?nestedFields=contentValue",
                e.id.as_ref().unwrap()
            ))
            .basic_auth(user.0, Some(user.1))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(d["fileName"], json!(e.name));
        assert_eq!(d["sizeInBytes"], json!(e.size));
        assert_eq!(d["encodingFormat"], json!(e.mime));
        assert_eq!(d["externalReferenceCode"], json!(e.marker));
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(d["contentValue"].as_str().unwrap())
            .unwrap();
        let sha: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(sha, e.sha256);
        let custom = d["customFields"].as_array().unwrap();
        assert!(
            custom
                .iter()
                .any(|f| f["name"] == "documentId" && f["customValue"]["data"] == json!(e.marker))
        );
        assert!(
            custom
                .iter()
                .any(|f| f["name"] == "caseNumber" && f["customValue"]["data"].is_i64())
        );
        assert_eq!(d["documentType"]["name"], json!("IngestBench Document"));
        assert_eq!(
            d["documentType"]["contentFields"].as_array().unwrap().len(),
            5
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_stores_300_documents_with_metadata_read_back_by_id() {
    let (target, dir) = common::target().await;
    let url = target.http_url().unwrap();
    let pw = common::password_file(dir.path(), "admin");
    let results = dir.path().join("results");
    let (outcome, result) = ingestbench::run_command(&run_args(&[
        "--url",
        &url,
        "--password-file",
        pw.to_str().unwrap(),
        "--docs",
        "300",
        "--threads",
        "4",
        "--runs",
        "1",
        "--docs-per-folder",
        "100",
        "--results-dir",
        results.to_str().unwrap(),
    ]))
    .await
    .unwrap();
    assert_eq!(
        (outcome, result.docs_ok, result.plan.protocol.name()),
        (ingestbench::Outcome::Success, 300, "liferay")
    );
    assert_eq!(target.count_documents().await.unwrap(), 300);
    let m = Manifest::read(
        &results
            .join(format!("run-{}", result.id))
            .join("manifest.jsonl"),
    )
    .unwrap();
    assert_eq!(m.len(), 300);
    read_back(&url, ("admin", "admin"), &m).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth2_token_expiry_mid_run_costs_no_upload() {
    // Tokens live 1 s on the server; we also revoke them all every 100 ms mid-run.
    let (target, dir) =
        common::target_with(|c| c.token_lifetime = std::time::Duration::from_millis(1000)).await;
    let url = target.http_url().unwrap();
    let pw = common::password_file(dir.path(), "admin");
    let results = dir.path().join("results");
    let expire = target.token_expirer();
    let killer = tokio::spawn(async move {
        for _ in 0..15 {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            expire();
        }
    });
    let (outcome, result) = ingestbench::run_command(&run_args(&[
        "--url",
        &url,
        "--auth",
        "oauth2",
        "--user",
        "admin",
        "--password-file",
        pw.to_str().unwrap(),
        "--docs",
        "600",
        "--threads",
        "4",
        "--runs",
        "1",
        "--results-dir",
        results.to_str().unwrap(),
        "--small-size",
        "2KiB",
    ]))
    .await
    .unwrap();
    killer.await.unwrap();
    assert_eq!(
        outcome,
        ingestbench::Outcome::Success,
        "{:?}",
        result.errors
    );
    assert_eq!(result.docs_ok, 600);
    assert!(
        target.logins() > 2,
        "tokens were renewed ({} issued)",
        target.logins()
    );
}

/// What readers list and query (`GET /document-folders/{id}/documents`, the site's documents
/// with `search`, `filter` and `flatten`) as the spec declares it, and as strict as Liferay:
/// an unknown folder or site is 404, a filter that does not parse or names an unknown field is
/// 400, each with a Problem body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_target_lists_searches_and_filters_like_liferay() {
    let s = spec();
    for (path, params) in [
        (
            "/o/headless-delivery/v1.0/sites/guest/documents",
            &["flatten", "search", "page", "pageSize", "filter"][..],
        ),
        (
            "/o/headless-delivery/v1.0/document-folders/1/documents",
            &["page", "pageSize"][..],
        ),
    ] {
        let op = spec_op(&s, path, "get").expect("a GET in the spec");
        let declared: Vec<String> = op["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let name = p["$ref"].as_str().unwrap().rsplit('/').next().unwrap();
                s["components"]["parameters"][name]["name"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        for p in params {
            assert!(declared.iter().any(|d| d == p), "{path}: {p} is declared");
        }
    }
    let (target, _dir) = common::target().await;
    let base = format!("{}/o/headless-delivery/v1.0", target.http_url().unwrap());
    let c = ingestbench::reqwest_builder().build().unwrap();
    let auth = |r: reqwest::RequestBuilder| r.basic_auth("admin", Some("admin"));
    let folder = |url: String, name: &'static str| {
        let r = auth(c.post(url)).json(&json!({ "name": name }));
        async move {
            r.send().await.unwrap().json::<Value>().await.unwrap()["id"]
                .as_i64()
                .unwrap()
        }
    };
    let f = folder(format!("{base}/sites/guest/document-folders"), "f").await;
    let g = folder(format!("{base}/document-folders/{f}/document-folders"), "g").await;
    for (folder, file, title) in [
        (f, "a.txt", "Alpha report"),
        (f, "b.pdf", "Beta"),
        (g, "c.txt", "Gamma (doc-00000003.txt)"),
    ] {
        let form = reqwest::multipart::Form::new()
            .part(
                "file",
                reqwest::multipart::Part::bytes(b"x".to_vec())
                    .file_name(file)
                    .mime_str("text/plain")
                    .unwrap(),
            )
            .text("document", json!({ "title": title }).to_string());
        let r = auth(c.post(format!("{base}/document-folders/{folder}/documents")))
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    let get = |url: String| {
        let r = auth(c.get(url));
        async move {
            let r = r.send().await.unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    let titles = |page: &Value| -> Vec<String> {
        common::assert_valid(&s, &schema(&s, "PageDocument"), page);
        let items = page["items"].as_array().unwrap();
        assert_eq!(page["totalCount"], json!(items.len()), "{page}");
        items
            .iter()
            .map(|d| d["title"].as_str().unwrap().to_string())
            .collect()
    };
    let site = format!("{base}/sites/guest/documents");
    for (query, want) in [
        // The site's root folder holds none of them; flatten takes every folder below it.
        ("search=report", vec![]),
        ("flatten=true&search=REPORT", vec!["Alpha report"]),
        (
            "flatten=true&search=doc-00000003",
            vec!["Gamma (doc-00000003.txt)"],
        ),
        (
            "flatten=true&search=.txt",
            vec!["Alpha report", "Gamma (doc-00000003.txt)"],
        ),
        ("flatten=true&filter=title eq 'Beta'", vec!["Beta"]),
        ("flatten=true&filter=fileExtension eq 'pdf'", vec!["Beta"]),
        (
            "flatten=true&filter=startswith(title,'gam')",
            vec!["Gamma (doc-00000003.txt)"],
        ),
        (
            &format!("flatten=true&filter=documentFolderId eq {g}"),
            vec!["Gamma (doc-00000003.txt)"],
        ),
        (
            "flatten=true&search=a&filter=contains(title,'alpha')",
            vec!["Alpha report"],
        ),
        ("flatten=true&search=nothing-like-it", vec![]),
    ] {
        let (status, page) = get(format!("{site}?{query}")).await;
        assert_eq!(status, 200, "{query}: {page}");
        assert_eq!(titles(&page), want, "{query}");
    }
    let (status, page) = get(format!(
        "{base}/document-folders/{f}/documents?search=alpha"
    ))
    .await;
    assert_eq!(
        (status, titles(&page)),
        (200, vec!["Alpha report".to_string()])
    );
    let (status, page) = get(format!(
        "{base}/document-folders/{f}/documents?page=1&pageSize=100"
    ))
    .await;
    assert_eq!((status, titles(&page).len()), (200, 2));
    // Strict where Liferay is: 404 for what is not there, 400 for a filter it cannot read.
    for (url, want, says) in [
        (
            format!("{base}/document-folders/999999/documents"),
            404,
            "No DLFolder exists with the primary key 999999",
        ),
        (
            format!("{base}/document-folders/abc/documents?search=x"),
            404,
            "No DLFolder exists",
        ),
        (
            format!("{base}/sites/nope/documents?flatten=true&search=x"),
            404,
            "Unable to get a valid site",
        ),
        (
            format!("{site}?filter=title eq 'open"),
            400,
            "Invalid filter",
        ),
        (format!("{site}?filter=title eq 5"), 400, "Invalid filter"),
        (
            format!("{site}?filter=bogus eq 'x'"),
            400,
            "not supported: bogus",
        ),
        (format!("{site}?flatten=maybe"), 400, "Invalid flatten"),
        (
            format!("{site}?search=x&pageSize=0"),
            400,
            "Invalid pageSize",
        ),
    ] {
        let (status, p) = get(url.clone()).await;
        assert_eq!(status, want, "{url}: {p}");
        let name = if want == 404 {
            "NOT_FOUND"
        } else {
            "BAD_REQUEST"
        };
        assert_eq!(p["status"], json!(name), "{url}: a Problem: {p}");
        assert!(p["title"].as_str().unwrap().contains(says), "{url}: {p}");
    }
}
