//! criterion benches of the hot paths: building a document's request body (what a worker
//! does per upload before sending), Liferay's document JSON, its manifest line, recording a latency, merging
//! recorders (once per worker per run), rendering the reports, and a corpus import's ETA (its
//! cost fit, horizon and swing: ten times a second on the progress line). `cargo bench`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ingestbench::fixtures::{Fixtures, Profile, SizeClass};
use ingestbench::metrics::Recorder;
use ingestbench::report::export;

fn request_body(c: &mut Criterion) {
    let profile = Arc::new(Profile::load("acme").unwrap());
    for (class, size) in [
        (SizeClass::Small, 10 * 1024u64),
        (SizeClass::Large, 3 * 1024 * 1024),
    ] {
        let f = Fixtures::new(class, size, 1, profile.clone());
        let mut i = 0u64;
        c.bench_function(&format!("build upload body ({})", class.name()), |b| {
            b.iter(|| {
                i += 1;
                let doc = f.doc(0xabc, i);
                let body = ingestbench::protocol::alfresco::upload_body(
                    &profile,
                    &doc,
                    "ingestbench/x/run-1/0000",
                    false,
                )
                .expect("a fixture body");
                black_box(body.len())
            })
        });
        // Into /dev/null: the line, its SHA-256 and the buffered write every 8 KiB.
        let manifest =
            ingestbench::results::manifest::Manifest::create(std::path::Path::new("/dev/null"))
                .expect("open /dev/null");
        let mut w = manifest.writer(None);
        c.bench_function(
            &format!("manifest line of a document ({})", class.name()),
            |b| {
                b.iter(|| {
                    i += 1;
                    let doc = f.doc(0xabc, i);
                    w.ok(1, &doc, "ingestbench/x/run-1/0000", "0f7a-9c2e-4b1d", None);
                })
            },
        );
        c.bench_function(
            &format!("manifest sha256 of a document ({})", class.name()),
            |b| {
                b.iter(|| {
                    i += 1;
                    let doc = f.doc(0xabc, i);
                    black_box(doc.sha256_hex().as_str().len())
                })
            },
        );
    }
}

fn liferay_document(c: &mut Criterion) {
    let profile = Arc::new(Profile::load("liferay").unwrap());
    let fields = ingestbench::protocol::liferay::json::Fields::new(&profile);
    let f = Fixtures::new(SizeClass::Small, 10 * 1024, 1, profile.clone());
    let mut parts = [Vec::new(), Vec::new(), Vec::new()];
    let mut i = 0u64;
    c.bench_function("liferay document JSON (liferay profile)", |b| {
        b.iter(|| {
            i += 1;
            let doc = f.doc(0xabc, i);
            fields.write(&profile, &doc, 42, &mut parts);
            black_box(parts[0].len())
        })
    });
}

fn record(c: &mut Criterion) {
    let mut r = Recorder::new();
    let now = Instant::now();
    let mut us = 1000u64;
    c.bench_function("record a latency", |b| {
        b.iter(|| {
            us = (us * 7 + 13) % 5_000_000 + 1;
            r.record_ok(Duration::from_micros(black_box(us)), 10240, now);
        })
    });
}

/// What a worker adds per upload to its run's shared tally (the timeline's counts and the
/// latencies by size): relaxed atomic adds, uncontended and with 2 workers at once.
fn tally(c: &mut Criterion) {
    let t = ingestbench::engine::timeline::Tally::default();
    let mut us = 1000u64;
    let mut size = 1u64;
    c.bench_function("tally an upload (timeline and sizes)", |b| {
        b.iter(|| {
            us = (us * 7 + 13) % 5_000_000 + 1;
            size = (size * 5 + 3) % 50_000_000;
            t.ok(0, black_box(size), Duration::from_micros(black_box(us)));
        })
    });
    // The worst case of a run: workers uploading one fixture size at once, every add to the
    // same bucket's cache line, one worker per core (this machine's 2: more would share a
    // core and time itself). The time is what each worker pays per upload (the wall time of
    // `iters` uploads each, side by side).
    c.bench_function("tally an upload, 2 workers at once (one size)", |b| {
        b.iter_custom(|iters| {
            let t = ingestbench::engine::timeline::Tally::default();
            let start = Instant::now();
            std::thread::scope(|s| {
                for w in 0..2u64 {
                    let t = &t;
                    s.spawn(move || {
                        for k in 0..iters {
                            t.ok(
                                0,
                                black_box(10_240),
                                Duration::from_micros(500 + (k + w) % 97),
                            );
                        }
                    });
                }
            });
            start.elapsed()
        })
    });
}

fn merge(c: &mut Criterion) {
    let now = Instant::now();
    let workers: Vec<Recorder> = (0..16)
        .map(|w| {
            let mut r = Recorder::new();
            for k in 0..10_000u64 {
                r.record_ok(
                    Duration::from_micros(500 + (k * 37 + w) % 100_000),
                    10240,
                    now,
                );
            }
            r
        })
        .collect();
    c.bench_function("merge 16 worker recorders (10k samples each)", |b| {
        b.iter(|| {
            let mut all = Recorder::new();
            for w in &workers {
                all.merge(w);
            }
            black_box(all.latency())
        })
    });
}

fn render(c: &mut Criterion) {
    // The fixed sweep the snapshot tests render (tests/data/fixed-sweep).
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fixed-sweep");
    let (plan, runs) = ingestbench::results::load_dir(&dir).expect("tests/data/fixed-sweep");
    let s = ingestbench::analysis::summary::summarize(&plan, &runs);
    for e in export::all() {
        c.bench_function(&format!("render {}", e.file_name()), |b| {
            b.iter(|| black_box(e.render(&s).len()))
        });
    }
}

/// A corpus import's ETA late in a long import: a full history (2,048 samples, a second
/// apart), the cost fit, the horizon's look back and the swing's stretches, as the progress
/// line computes it every 100 ms.
fn eta(c: &mut Criterion) {
    use ingestbench::analysis::eta::{Counts, Tracker, eta};
    let mut tr = Tracker::new(30.0, 0.0);
    let at = |t: f64| Counts {
        docs: 40.0 * t + 400.0 * (t / 60.0).sin(),
        folders: (4.0 * t).min(2_000.0),
        bytes: 4.0e5 * t,
    };
    for i in 0..2_047 {
        tr.observe_counts(i as f64, at(i as f64));
    }
    let total = at(2_300.0);
    c.bench_function("corpus import ETA (2,048 samples, 89 % done)", |b| {
        b.iter(|| black_box(eta(&tr.observed_work(2_046.5, total))))
    });
}

criterion_group!(
    benches,
    request_body,
    liferay_document,
    record,
    tally,
    merge,
    render,
    eta
);
criterion_main!(benches);
