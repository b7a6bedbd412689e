//! The HTML report in a real browser (Debian's headless Chromium): it loads with no console
//! errors and no network fetches, and the chart elements are there in the rendered DOM.

use std::process::Command;

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
#[ignore = "needs chromium (scripts/deps.sh installs it); scripts/test.sh runs it"]
fn html_report_renders_in_headless_chromium() {
    let browser = chromium().expect(
        "chromium is missing: install the Debian package chromium (scripts/deps.sh does, as root)",
    );
    let html = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/snapshots/report.html"
    ))
    .unwrap();
    assert!(
        !html.contains("src=") && !html.contains("href=") && !html.contains("<script"),
        "self-contained: no fetches, no scripts"
    );
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).unwrap();
    let shot = dir.path().join("shot.png");
    let args = |extra: &[&str]| {
        let profile = tempfile::tempdir().unwrap();
        let mut c = Command::new(browser);
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()));
        let o = c.output().unwrap();
        drop(profile);
        o
    };
    let dom = args(&["--dump-dom"]);
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom_text = String::from_utf8_lossy(&dom.stdout);
    let count = |needle: &str| dom_text.matches(needle).count();
    assert_eq!(
        count("<svg class=\"chart\""),
        1,
        "one chart per size and connection"
    );
    assert_eq!(count("class=\"series\""), 2, "one line per access method");
    assert_eq!(count("class=\"usl\""), 2, "a USL fit per method");
    assert_eq!(count("class=\"errbar\""), 10, "an error bar per point");
    assert!(
        dom_text.contains("What it means")
            && dom_text.contains("https-lb vs direct at 1 thread")
            && dom_text.contains("% slower")
    );
    // The answers come first, in their own box, before the charts and the details.
    let answers = dom_text.find("<h2>Answers</h2>").expect("an Answers block");
    assert!(answers < dom_text.find("<svg class=\"chart\"").unwrap());
    assert!(answers < dom_text.find("What it means").unwrap());
    assert_eq!(
        count("<dt>"),
        5,
        "costs, scaling per method, fastest, unresolved"
    );
    assert!(dom_text.contains("<dt>What https-lb costs against direct</dt>"));
    let stderr = String::from_utf8_lossy(&dom.stderr);
    let console_errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") && (l.contains("ERROR") || l.contains("Uncaught")))
        .collect();
    assert!(
        console_errors.is_empty(),
        "console errors: {console_errors:?}"
    );
    let s = args(&[
        "--window-size=1200,1600",
        &format!("--screenshot={}", shot.display()),
    ]);
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "a real screenshot ({} bytes)",
        png.len()
    );
}
