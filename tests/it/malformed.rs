//! Malformed server answers are classified failures, never panics or hangs: a 201 that is not
//! JSON, a 201 without an id, a truncated body, a body dripping slower than --timeout.

use crate::common;

use std::time::Duration;

use clap::Parser;
use ingestbench::metrics::ErrorClass;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Answers the parent check like Alfresco, and every upload with `kind`'s misbehaviour.
async fn server(kind: &'static str) -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let (mut sock, _) = l.accept().await.unwrap();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                loop {
                    let head_end = loop {
                        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            break p;
                        }
                        let mut chunk = [0u8; 65536];
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    };
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
                    let len: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map_or(0, |v| v.trim().parse().unwrap());
                    while buf.len() < head_end + 4 + len {
                        let mut chunk = [0u8; 65536];
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    buf.drain(..head_end + 4 + len);
                    if head.starts_with("get") {
                        let b = r#"{"entry":{"id":"p","name":"home","nodeType":"cm:folder","isFolder":true,"isFile":false}}"#;
                        let r = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{b}",
                            b.len()
                        );
                        if sock.write_all(r.as_bytes()).await.is_err() {
                            return;
                        }
                        continue;
                    }
                    let r = match kind {
                        "not-json" => "HTTP/1.1 201 Created\r\nContent-Type: text/html\r\nContent-Length: 11\r\n\r\n<html></ht>".to_string(),
                        "no-id" => "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"entry\":{}}".to_string(),
                        "wrong-status" => "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}".to_string(),
                        "truncated" => {
                            let _ = sock.write_all(b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"entry\":{\"id\":").await;
                            return;
                        }
                        "drip" => {
                            let _ = sock.write_all(b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n").await;
                            for b in br#"{"entry":{"id":"x"}}                    "# {
                                tokio::time::sleep(Duration::from_millis(100)).await;
                                if sock.write_all(&[*b]).await.is_err() {
                                    return;
                                }
                            }
                            return;
                        }
                        _ => unreachable!(),
                    };
                    if sock.write_all(r.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_answers_are_classified() {
    for (kind, class) in [
        ("not-json", ErrorClass::Protocol),
        ("no-id", ErrorClass::Protocol),
        ("wrong-status", ErrorClass::Protocol),
        ("truncated", ErrorClass::Io),
        ("drip", ErrorClass::Timeout),
    ] {
        let url = server(kind).await;
        let dir = tempfile::tempdir().unwrap();
        let pw = common::password_file(dir.path(), "x");
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
            "6",
            "--threads",
            "2",
            "--runs",
            "1",
            "--timeout",
            "1",
            "--results-dir",
            dir.path().to_str().unwrap(),
        ])
        .unwrap();
        let ingestbench::cli::Command::Run(args) = cli.command else {
            unreachable!()
        };
        let started = std::time::Instant::now();
        let (outcome, r) = ingestbench::run_command(&args).await.unwrap();
        assert_eq!(outcome, ingestbench::Outcome::Failures, "{kind}");
        assert_eq!((r.docs_ok, r.docs_failed), (0, 6), "{kind}");
        assert!(
            r.errors.iter().all(|e| e.class == class),
            "{kind}: {:?}",
            r.errors
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{kind}: nothing hangs"
        );
    }
}
