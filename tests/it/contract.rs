//! Contract tests against the official Alfresco REST v1 definitions in
//! `tests/specs/alfresco/`: the requests the client sends (captured by a raw HTTP
//! listener) and the responses the embedded target returns must conform.

use crate::common;

use clap::Parser;
use ingestbench::emulator::multipart;
use serde_json::{Value, json};

fn op<'a>(spec: &'a Value, path: &str, method: &str) -> &'a Value {
    spec["paths"]
        .get(path)
        .and_then(|p| p.get(method))
        .unwrap_or_else(|| panic!("spec has no {method} {path}"))
}

#[test]
fn the_spec_declares_what_the_client_relies_on() {
    let core = common::spec("alfresco/alfresco-core.yaml");
    assert_eq!(
        core["basePath"],
        json!(ingestbench::protocol::alfresco::CORE_PATH)
    );
    let create = op(&core, "/nodes/{nodeId}/children", "post");
    assert!(
        create["consumes"]
            .as_array()
            .unwrap()
            .contains(&json!("multipart/form-data"))
    );
    assert_eq!(
        create["responses"]["201"]["schema"]["$ref"],
        json!("#/definitions/NodeEntry")
    );
    for code in ["400", "401", "404", "409", "422"] {
        assert!(
            create["responses"].get(code).is_some(),
            "createNode declares {code}"
        );
    }
    let text = create["description"].as_str().unwrap();
    for field in [
        "filedata",
        "name",
        "nodeType",
        "relativePath",
        "versioningEnabled",
        "Any other field provided will be treated as a property",
    ] {
        assert!(text.contains(field), "createNode documents `{field}`");
    }
    assert!(
        core["definitions"]["Node"]["required"]
            .as_array()
            .unwrap()
            .contains(&json!("id"))
    );
    let auth = common::spec("alfresco/alfresco-auth.yaml");
    assert_eq!(
        auth["basePath"],
        json!(ingestbench::protocol::alfresco::AUTH_PATH)
    );
    let login = op(&auth, "/tickets", "post");
    assert!(login["responses"].get("201").is_some() && login["responses"].get("403").is_some());
    let props = auth["definitions"]["TicketBody"]["properties"]
        .as_object()
        .unwrap();
    assert!(props.contains_key("userId") && props.contains_key("password"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upload_request_is_the_documented_multipart() {
    // One end-to-end scenario, read top to bottom.
    let (url, seen) = common::capture(|method, _, _| {
        if method == "GET" {
            ("200 OK", json!({"entry": {"id": "home", "name": "admin", "nodeType": "cm:folder", "isFolder": true, "isFile": false}}).to_string())
        } else {
            ("201 Created", json!({"entry": {"id": "3f2a0c1e-0000-4000-8000-000000000001", "name": "x", "nodeType": "acme:document", "isFolder": false, "isFile": true}}).to_string())
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let pw = common::password_file(dir.path(), "pw");
    let cli = ingestbench::cli::Cli::try_parse_from([
        "ingestbench",
        "run",
        "--warmup",
        "0",
        "--quiet",
        "--auth",
        "basic",
        "--url",
        &url,
        "--password-file",
        pw.to_str().unwrap(),
        "--docs",
        "3",
        "--threads",
        "1",
        "--runs",
        "1",
        "--no-versioning",
        "--results-dir",
        dir.path().to_str().unwrap(),
    ])
    .unwrap();
    let ingestbench::cli::Command::Run(args) = cli.command else {
        unreachable!()
    };
    let (outcome, _) = ingestbench::run_command(&args).await.unwrap();
    assert_eq!(outcome, ingestbench::Outcome::Success);
    let seen = seen.lock().unwrap();
    let core = ingestbench::protocol::alfresco::CORE_PATH;
    assert_eq!(seen[0].0, "GET");
    assert_eq!(seen[0].1, format!("{core}/nodes/-my-"));
    let posts: Vec<_> = seen.iter().filter(|r| r.0 == "POST").collect();
    assert_eq!(posts.len(), 3);
    let profile = ingestbench::fixtures::Profile::load("acme").unwrap();
    for (_, path, headers, body) in posts {
        assert_eq!(path, &format!("{core}/nodes/-my-/children"));
        let h = |k: &str| {
            headers
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
                .unwrap_or("")
        };
        assert!(h("authorization").starts_with("Basic "));
        assert_eq!(
            h("content-length").parse::<usize>().unwrap(),
            body.len(),
            "exact Content-Length, not chunked"
        );
        let boundary =
            multipart::boundary(h("content-type")).expect("multipart/form-data with a boundary");
        let parts = multipart::parse(body, &boundary).unwrap();
        let names: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
        for required in [
            "filedata",
            "name",
            "nodeType",
            "relativePath",
            "versioningEnabled",
        ] {
            assert!(names.contains(&required), "{required} in {names:?}");
        }
        assert!(
            !names.iter().any(|n| n.eq_ignore_ascii_case("autoRename")),
            "never autoRename"
        );
        let file = parts.iter().find(|p| p.name == "filedata").unwrap();
        assert!(file.filename.is_some() && file.content_type.is_some());
        assert_eq!(file.data.len() as u64, 10 * 1024);
        for prop in &profile.properties {
            assert!(
                names.contains(&prop.name.as_str()),
                "property {} sent",
                prop.name
            );
        }
        let name = &parts.iter().find(|p| p.name == "name").unwrap().data;
        assert_eq!(file.filename.as_deref().unwrap().as_bytes(), &name[..]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_target_answers_in_the_documented_shapes() {
    // One end-to-end scenario, read top to bottom.
    let core = common::spec("alfresco/alfresco-core.yaml");
    let auth_spec = common::spec("alfresco/alfresco-auth.yaml");
    let def = |s: &Value, name: &str| s["definitions"][name].clone();
    let (target, _dir) = common::target().await;
    let base = target.http_url().unwrap();
    let api = format!("{base}{}", ingestbench::protocol::alfresco::CORE_PATH);
    let c = ingestbench::reqwest_builder().build().unwrap();

    let t = c
        .post(format!(
            "{base}{}/tickets",
            ingestbench::protocol::alfresco::AUTH_PATH
        ))
        .json(&json!({"userId": "admin", "password": "admin"}))
        .send()
        .await
        .unwrap();
    assert_eq!(t.status(), 201);
    let tv: Value = t.json().await.unwrap();
    common::assert_valid(&auth_spec, &def(&auth_spec, "TicketEntry"), &tv);
    // The scheme is compared ignoring case, by the tickets resource as by every other
    // (Alfresco: `authorizationParts[0].equalsIgnoreCase("basic")`); another scheme is refused.
    let b64 = |s: &str| {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(s)
    };
    let me = format!(
        "{base}{}/tickets/-me-",
        ingestbench::protocol::alfresco::AUTH_PATH
    );
    let ticket = tv["entry"]["id"].as_str().unwrap();
    for (header, status) in [
        (format!("BASIC {}", b64(ticket)), 200),
        (format!("basic {}", b64(&format!(":{ticket}"))), 200),
        (format!("Bearer {}", b64(ticket)), 401),
    ] {
        let r = c
            .get(&me)
            .header("authorization", &header)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), status, "GET tickets/-me- with {header}");
    }
    let r = c
        .get(format!("{api}/nodes/-my-"))
        .header("authorization", format!("bAsIc {}", b64("admin:admin")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "a Basic scheme in any case");
    let bad = c
        .post(format!(
            "{base}{}/tickets",
            ingestbench::protocol::alfresco::AUTH_PATH
        ))
        .json(&json!({"userId": "admin", "password": "nope"}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 403);

    let form = |name: &str, extra: &[(&str, &str)]| {
        let mut f = reqwest::multipart::Form::new()
            .part(
                "filedata",
                reqwest::multipart::Part::bytes(b"hello".to_vec())
                    .file_name(name.to_string())
                    .mime_str("text/plain")
                    .unwrap(),
            )
            .text("relativePath", "a/b");
        for (k, v) in extra {
            f = f.text(k.to_string(), v.to_string());
        }
        f
    };
    let created = c
        .post(format!("{api}/nodes/-my-/children"))
        .basic_auth("admin", Some("admin"))
        .multipart(form("x.txt", &[("cm:title", "T")]))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let cv: Value = created.json().await.unwrap();
    common::assert_valid(&core, &def(&core, "NodeEntry"), &cv);
    assert_eq!(cv["entry"]["properties"]["cm:title"], json!("T"));
    assert_eq!(cv["entry"]["content"]["mimeType"], json!("text/plain"));
    let id = cv["entry"]["id"].as_str().unwrap().to_string();

    // Errors: each status the real server gives, in the Error shape.
    let cases: Vec<(reqwest::RequestBuilder, u16)> = vec![
        (
            c.post(format!("{api}/nodes/-my-/children"))
                .basic_auth("admin", Some("admin"))
                .multipart(form("x.txt", &[])),
            409,
        ),
        (
            c.post(format!("{api}/nodes/-my-/children"))
                .basic_auth("admin", Some("admin"))
                .multipart(form("y.txt", &[("acme:bogus", "1")])),
            400,
        ),
        (
            c.post(format!("{api}/nodes/-my-/children"))
                .basic_auth("admin", Some("admin"))
                .multipart(form("z.txt", &[("nodeType", "acme:document")])),
            422,
        ),
        (
            c.post(format!("{api}/nodes/-my-/children"))
                .basic_auth("admin", Some("admin"))
                .multipart(form("bad:name.txt", &[])),
            422,
        ),
        (
            c.post(format!("{api}/nodes/-my-/children"))
                .basic_auth("admin", Some("admin"))
                .body("plain")
                .header("content-type", "text/plain"),
            400,
        ),
        (
            c.post(format!("{api}/nodes/-my-/children"))
                .basic_auth("admin", Some("wrong"))
                .multipart(form("w.txt", &[])),
            401,
        ),
        (
            c.post(format!("{api}/nodes/no-such-node/children"))
                .basic_auth("admin", Some("admin"))
                .multipart(form("v.txt", &[])),
            404,
        ),
        (
            c.get(format!("{api}/nodes/no-such-node"))
                .basic_auth("admin", Some("admin")),
            404,
        ),
    ];
    for (req, want) in cases {
        let r = req.send().await.unwrap();
        assert_eq!(r.status().as_u16(), want);
        if want == 401 {
            assert!(
                r.headers()
                    .get("www-authenticate")
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("Basic")
            );
        }
        let v: Value = r.json().await.unwrap();
        common::assert_valid(&core, &def(&core, "Error"), &v);
        assert_eq!(v["error"]["statusCode"], json!(want));
    }

    // Read back: node, content, children page, then delete (permanent).
    let g: Value = c
        .get(format!("{api}/nodes/{id}"))
        .basic_auth("admin", Some("admin"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    common::assert_valid(&core, &def(&core, "NodeEntry"), &g);
    let body = c
        .get(format!("{api}/nodes/{id}/content"))
        .basic_auth("admin", Some("admin"))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(&body[..], b"hello");
    let folder: Value = c
        .get(format!("{api}/nodes/-my-?relativePath=a/b"))
        .basic_auth("admin", Some("admin"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let fid = folder["entry"]["id"].as_str().unwrap();
    let page: Value = c
        .get(format!(
            "{api}/nodes/{fid}/children?skipCount=0&maxItems=10"
        ))
        .basic_auth("admin", Some("admin"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    common::assert_valid(&core, &def(&core, "NodePaging"), &page);
    assert_eq!(page["list"]["pagination"]["totalItems"], json!(1));
    let d = c
        .delete(format!("{api}/nodes/{id}?permanent=true"))
        .basic_auth("admin", Some("admin"))
        .send()
        .await
        .unwrap();
    assert_eq!(d.status(), 204);
    assert_eq!(
        c.get(format!("{api}/nodes/{id}"))
            .basic_auth("admin", Some("admin"))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
}

/// `GET queries/nodes`, what readers search with: a `NodePaging` of the documents whose name
/// matches below `rootNodeId`, and the documented 400 and 404.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_target_answers_queries_in_the_documented_shape() {
    let core = common::spec("alfresco/alfresco-core.yaml");
    let find = op(&core, "/queries/nodes", "get");
    let params: Vec<&str> = find["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(params.contains(&"term") && params.contains(&"rootNodeId"));
    let def = |name: &str| core["definitions"][name].clone();
    let (target, _dir) = common::target().await;
    let api = format!(
        "{}{}",
        target.http_url().unwrap(),
        ingestbench::protocol::alfresco::CORE_PATH
    );
    let c = ingestbench::reqwest_builder().build().unwrap();
    let mut ids = Vec::new();
    for name in ["report-2026.txt", "minutes.txt"] {
        let form = reqwest::multipart::Form::new()
            .part(
                "filedata",
                reqwest::multipart::Part::bytes(b"hello".to_vec())
                    .file_name(name)
                    .mime_str("text/plain")
                    .unwrap(),
            )
            .text("relativePath", "q/deep");
        let r = c
            .post(format!("{api}/nodes/-my-/children"))
            .basic_auth("admin", Some("admin"))
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        let v: Value = r.json().await.unwrap();
        ids.push(v["entry"]["id"].as_str().unwrap().to_string());
    }
    let query = |q: &[(&str, &str)]| {
        c.get(format!("{api}/queries/nodes"))
            .basic_auth("admin", Some("admin"))
            .query(q)
            .send()
    };
    let r = query(&[("term", "REPORT*"), ("rootNodeId", "-my-")])
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    common::assert_valid(&core, &def("NodePaging"), &v);
    let found: Vec<&str> = v["list"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["entry"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(found, vec![ids[0].as_str()]);
    let folders: Value = query(&[("term", "deep"), ("nodeType", "cm:folder")])
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(folders["list"]["pagination"]["totalItems"], json!(1));
    for (q, want) in [
        (vec![("term", "ab")], 400),
        (vec![], 400),
        (
            vec![("term", "report"), ("rootNodeId", "no-such-node")],
            404,
        ),
    ] {
        let r = query(&q).await.unwrap();
        assert_eq!(r.status().as_u16(), want, "{q:?}");
        let v: Value = r.json().await.unwrap();
        common::assert_valid(&core, &def("Error"), &v);
    }
}
