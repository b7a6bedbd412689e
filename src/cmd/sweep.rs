//! `ingestbench sweep`: every access method × connection policy × size × thread count, R
//! runs each in an order that spreads drift, each run's result written the moment it ends
//! (so an interrupted sweep keeps everything done and `--resume` finishes only the rest),
//! then the reports.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::{Progress, password, rand_u64};
use crate::access::{AccessMethod, ConnectionPolicy};
use crate::cli::{Order, SweepArgs};
use crate::fixtures::{Fixtures, Profile, SizeClass};
use crate::plan::sweep::{SweepPlanSpec, schedule};
use crate::protocol::{AuthMode, ProtocolKind, Repo, RepoOptions};
use crate::report::export;
use crate::report::sweep::{CellKey, CellRun, MethodRecord, SweepPlan, SweepSummary, summarize};
use crate::report::{SCHEMA_VERSION, Tool};
use crate::run::{CellPlan, Live, Manifest};
use crate::{Outcome, host, metrics, timefmt};

/// Reads `plan.json` and every `runs/*.json` of a sweep directory.
pub fn load_dir(dir: &Path) -> Result<(SweepPlan, Vec<CellRun>)> {
    let plan_path = dir.join("plan.json");
    let plan: SweepPlan = serde_json::from_str(
        &std::fs::read_to_string(&plan_path)
            .with_context(|| format!("cannot read {}", plan_path.display()))?,
    )
    .with_context(|| format!("{}: not an ingestbench sweep plan", plan_path.display()))?;
    if plan.schema_version != SCHEMA_VERSION {
        bail!(
            "{}: schema_version {} is not the {SCHEMA_VERSION} this ingestbench reads",
            plan_path.display(),
            plan.schema_version
        );
    }
    let mut runs = Vec::new();
    let runs_dir = dir.join("runs");
    if runs_dir.is_dir() {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&runs_dir)?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        for p in paths {
            let r: CellRun = serde_json::from_str(&std::fs::read_to_string(&p)?)
                .with_context(|| format!("{}: not a sweep run result", p.display()))?;
            runs.push(r);
        }
    }
    Ok((plan, runs))
}

/// Writes every report; returns their paths.
pub fn write_reports(dir: &Path, summary: &SweepSummary) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in export::all() {
        let p = dir.join(e.file_name());
        write_atomic(&p, &e.render(summary))?;
        out.push(p);
    }
    Ok(out)
}

fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

fn method_record(
    m: &AccessMethod,
    connections: Vec<crate::access::ConnectionPolicy>,
) -> MethodRecord {
    let url = match reqwest::Url::parse(&m.url) {
        Ok(u) if !m.is_embedded() => crate::plan::redact(&u),
        _ => m.url.clone(),
    };
    MethodRecord {
        name: m.name.clone(),
        description: m.description.clone(),
        url,
        http_version: match m.http_version {
            crate::access::HttpVersion::Http1 => "1.1".into(),
            crate::access::HttpVersion::Http2 => "2".into(),
        },
        embedded: m.is_embedded(),
        connections,
    }
}

/// A rough duration estimate, before anything is measured: a few ms per upload plus the
/// bytes at ~150 MB/s, spread over the workers (at most 4 truly parallel on a small box).
fn estimate_secs(spec: &SweepPlanSpec, cells: &[CellKey]) -> f64 {
    cells
        .iter()
        .map(|c| {
            let size = spec.common.sizes.of(size_class(&c.size));
            let per = 0.003 + size as f64 / 150e6;
            spec.docs as f64 * f64::from(spec.runs) * per / (c.threads.min(4) as f64)
        })
        .sum()
}

fn size_class(name: &str) -> SizeClass {
    match name {
        "average" => SizeClass::Average,
        "large" => SizeClass::Large,
        _ => SizeClass::Small,
    }
}

fn human_secs(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// Rebuilds the spec of an interrupted sweep from its directory (`--resume`).
fn resume_spec(a: &SweepArgs, plan: &SweepPlan, dir: &Path) -> Result<SweepPlanSpec> {
    let methods: Vec<AccessMethod> = serde_json::from_str(
        &std::fs::read_to_string(dir.join("methods.json"))
            .with_context(|| format!("--resume {}: methods.json missing", dir.display()))?,
    )?;
    let profile_spec = plan
        .profile
        .strip_prefix("built-in:")
        .unwrap_or(&plan.profile);
    let sizes_of = |n: &str| plan.sizes.iter().find(|(s, _)| s == n).map(|x| x.1);
    let defaults = crate::fixtures::Sizes::default();
    let protocol = match plan.protocol.as_str() {
        "liferay" => ProtocolKind::Liferay,
        "cmis" => ProtocolKind::Cmis,
        _ => ProtocolKind::Alfresco,
    };
    let common = crate::plan::CommonPlan {
        protocol,
        user: plan.user.clone(),
        password_file: a.common.password_file.clone(),
        auth: match plan.auth.as_str() {
            "basic" => AuthMode::Basic,
            "oauth2" => AuthMode::Oauth2,
            _ => AuthMode::Ticket,
        },
        parent: plan.parent.clone(),
        sizes: crate::fixtures::Sizes {
            small: sizes_of("small").unwrap_or(defaults.small),
            average: sizes_of("average").unwrap_or(defaults.average),
            large: sizes_of("large").unwrap_or(defaults.large),
        },
        seed: plan.seed,
        profile: Arc::new(Profile::load(profile_spec)?),
        docs_per_folder: plan.docs_per_folder,
        versioning: plan.versioning,
        timeout: Duration::from_secs_f64(plan.timeout_s),
        retries: a.common.retries,
        quiet: a.common.quiet,
    };
    // Each method's own policies, as recorded. A `--connection` list applied to every
    // method (all lists equal) is the spec's override; otherwise each method ran with its
    // file's single policy. Plans from before per-method records: the union, as then.
    let mut methods = methods;
    let lists: Vec<Vec<ConnectionPolicy>> = methods
        .iter()
        .map(|m| {
            plan.methods
                .iter()
                .find(|r| r.name == m.name)
                .map(|r| r.connections.clone())
                .unwrap_or_default()
        })
        .collect();
    let connections = if lists.iter().any(Vec::is_empty) {
        plan.connections
            .iter()
            .map(|c| {
                if c == "new" {
                    ConnectionPolicy::New
                } else {
                    ConnectionPolicy::Reuse
                }
            })
            .collect()
    } else if lists.windows(2).all(|w| w[0] == w[1]) && lists[0].len() > 1 {
        lists[0].clone()
    } else {
        for (m, l) in methods.iter_mut().zip(&lists) {
            m.connection = l[0];
        }
        Vec::new()
    };
    Ok(SweepPlanSpec {
        common,
        methods,
        unreachable: vec![],
        connections,
        sizes: plan.sizes.iter().map(|(s, _)| size_class(s)).collect(),
        threads: plan.threads.clone(),
        docs: plan.docs,
        runs: plan.runs,
        order: if plan.order == "random" {
            Order::Random
        } else {
            Order::Interleaved
        },
        baseline: plan.baseline.clone(),
    })
}

pub async fn sweep_command(a: &SweepArgs) -> Result<(Outcome, SweepSummary)> {
    let (dir, plan, spec, done) = match &a.resume {
        Some(dir) => {
            if !crate::plan::sweep::is_sweep_dir(dir) {
                bail!(
                    "--resume {}: not a sweep results directory (no plan.json)",
                    dir.display()
                );
            }
            let (plan, runs) = load_dir(dir)?;
            let spec = resume_spec(a, &plan, dir)?;
            (dir.clone(), plan, spec, runs)
        }
        None => {
            let spec = SweepPlanSpec::build(a).await?;
            let id = format!("{}-{:04x}", timefmt::compact_now(), rand_u64() & 0xffff);
            let c = &spec.common;
            let mut connections: Vec<String> = Vec::new();
            for m in &spec.methods {
                for p in spec.connections_of(m) {
                    if !connections.iter().any(|x| x == p.name()) {
                        connections.push(p.name().into());
                    }
                }
            }
            let plan = SweepPlan {
                schema_version: SCHEMA_VERSION,
                tool: Tool {
                    name: "ingestbench".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                },
                id: id.clone(),
                started_at: timefmt::datetime_ms(timefmt::now_ms()),
                seed: c.seed,
                methods: spec
                    .methods
                    .iter()
                    .map(|m| method_record(m, spec.connections_of(m)))
                    .collect(),
                connections,
                sizes: spec
                    .sizes
                    .iter()
                    .map(|s| (s.name().to_string(), c.sizes.of(*s)))
                    .collect(),
                threads: spec.threads.clone(),
                docs: spec.docs,
                runs: spec.runs,
                order: match spec.order {
                    Order::Interleaved => "interleaved".into(),
                    Order::Random => "random".into(),
                },
                baseline: spec.baseline.clone(),
                protocol: c.protocol.name().into(),
                auth: c.auth.name().into(),
                user: c.user.clone(),
                parent: c.parent.clone(),
                profile: c.profile.source.clone(),
                node_type: c.profile.node_type.clone(),
                docs_per_folder: c.docs_per_folder,
                versioning: c.versioning,
                timeout_s: c.timeout.as_secs_f64(),
                host: host::facts(),
            };
            (
                a.results_dir.join(format!("sweep-{id}")),
                plan,
                spec,
                Vec::new(),
            )
        }
    };
    let cells = spec.cells();
    let all = schedule(&cells, spec.runs, spec.order, spec.common.seed);
    let pending: Vec<(CellKey, u32)> = all
        .into_iter()
        .filter(|(c, r)| !done.iter().any(|d| &d.cell == c && d.record.run == *r))
        .collect();

    // The plan, before anything runs.
    let uploads = pending.len() as u64 * spec.docs;
    let quiet = spec.common.quiet;
    if !quiet || a.dry_run {
        eprintln!("ingestbench sweep {} -> {}", plan.id, dir.display());
        for m in &spec.methods {
            eprintln!(
                "  method {:<16} {} ({})",
                m.name,
                method_record(m, vec![]).url,
                spec.connections_of(m)
                    .iter()
                    .map(|c| c.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        for (name, why) in &spec.unreachable {
            eprintln!("  skipped {name}: unreachable ({why})");
        }
        eprintln!(
            "  sizes {}; threads {}; {} docs per run; {} runs per cell; order {}",
            plan.sizes
                .iter()
                .map(|(n, b)| format!("{n} ({b} B)"))
                .collect::<Vec<_>>()
                .join(", "),
            plan.threads
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(","),
            spec.docs,
            spec.runs,
            plan.order
        );
        let pending_cells: Vec<CellKey> = pending.iter().map(|x| x.0.clone()).collect();
        eprintln!(
            "  {} cells, {} runs to do ({} done), {uploads} uploads; rough estimate {}",
            cells.len(),
            pending.len(),
            done.len(),
            human_secs(estimate_secs(&spec, &pending_cells) / f64::from(spec.runs))
        );
    }
    if a.dry_run {
        return Ok((Outcome::Success, summarize(&plan, &done)));
    }
    // Credentials before anything is written: the embedded target takes admin/admin unless
    // a password was given; every other method needs one.
    let secret = if spec.methods.iter().all(AccessMethod::is_embedded) {
        super::embedded_password(&spec.common)?
    } else {
        password(&spec.common)?
    };
    std::fs::create_dir_all(dir.join("runs"))
        .with_context(|| format!("--results-dir: cannot create {}", dir.display()))?;
    if a.resume.is_none() {
        write_atomic(
            &dir.join("plan.json"),
            &serde_json::to_string_pretty(&plan)?,
        )?;
        write_atomic(
            &dir.join("methods.json"),
            &serde_json::to_string_pretty(&spec.methods)?,
        )?;
    }

    // The embedded target, when a method uses it.
    let embedded = if spec.methods.iter().any(AccessMethod::is_embedded) {
        Some(super::start_embedded(&spec.common, a.target_data_dir.as_deref(), &secret).await?)
    } else {
        None
    };
    // One client (and login) per method and connection policy.
    let max_threads = *spec.threads.iter().max().unwrap_or(&1) as usize;
    let mut clients: HashMap<(String, String), (Arc<Repo>, crate::access::ConnectionCounter)> =
        HashMap::new();
    for m in &spec.methods {
        for conn in spec.connections_of(m) {
            if !pending
                .iter()
                .any(|(c, _)| c.method == m.name && c.connection == conn.name())
            {
                continue;
            }
            let mut mm = m.clone();
            mm.connection = conn;
            let emb = embedded.as_ref().map(|e| {
                let t = &e.handle;
                let url = if m.url == "embedded:https" {
                    t.https_url().unwrap_or_default()
                } else {
                    t.http_url().unwrap_or_default()
                };
                (url, t.ca_pem.clone())
            });
            let (url, client, counter) = mm.client(
                emb.as_ref().map(|(u, c)| (u.as_str(), c.as_deref())),
                spec.common.timeout,
                max_threads,
            )?;
            let fast_url = url.clone();
            let proto = Repo::connect(
                spec.common.protocol,
                client,
                RepoOptions {
                    url,
                    user: spec.common.user.clone(),
                    password: secret.clone(),
                    auth: spec.common.auth,
                    parent: spec.common.parent.clone(),
                    profile: spec.common.profile.clone(),
                    versioning: spec.common.versioning,
                    node_header: m.node_header(),
                    node_cookie: m.node_cookie.clone(),
                    fast: mm
                        .fast_endpoint(
                            &fast_url,
                            emb.as_ref().and_then(|(_, c)| c.as_deref()),
                            spec.common.timeout,
                            counter.clone(),
                        )
                        .await?
                        .map(Arc::new),
                },
            )
            .await
            .with_context(|| format!("access method {} ({})", m.name, m.source.display()))?;
            clients.insert(
                (m.name.clone(), conn.name().to_string()),
                (Arc::new(proto), counter),
            );
        }
    }
    let fixtures: HashMap<String, Arc<Fixtures>> = spec
        .sizes
        .iter()
        .map(|s| {
            (
                s.name().to_string(),
                Arc::new(Fixtures::new(
                    *s,
                    spec.common.sizes.of(*s),
                    spec.common.seed,
                    spec.common.profile.clone(),
                )),
            )
        })
        .collect();

    // What an interrupted sweep already uploaded of a run it did not finish.
    let earlier = if a.resume.is_some() {
        Manifest::read(&dir.join("manifest.jsonl")).unwrap_or_default()
    } else {
        Vec::new()
    };
    let manifest = Manifest::create(&dir.join("manifest.jsonl"))?;
    let live = Arc::new(Live::default());
    let signals = super::watch_signals(live.clone());
    let progress = Progress::start(uploads, quiet, live.clone());
    let mut fatal = None;
    for (k, (cell, run)) in pending.iter().enumerate() {
        if live.interrupted.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        progress.set_message(format!(
            "[{}/{}] {} {} {} t={} run {run}",
            k + 1,
            pending.len(),
            cell.method,
            cell.connection,
            cell.size,
            cell.threads
        ));
        let (proto, counter) = clients[&(cell.method.clone(), cell.connection.clone())].clone();
        let fx = fixtures[&cell.size].clone();
        let cell_plan = CellPlan {
            docs: spec.docs,
            threads: cell.threads,
            runs: spec.runs,
            docs_per_folder: spec.common.docs_per_folder,
            folder: format!(
                "ingestbench/{}/{}-{}/{}/t{}/a{:04x}",
                plan.id,
                cell.method,
                cell.connection,
                cell.size,
                cell.threads,
                rand_u64() & 0xffff
            ),
            nonce: spec.common.seed ^ rand_u64(),
            tag: Some(Arc::from(
                cell.file_stem(*run)
                    .rsplit_once("_r")
                    .map_or(String::new(), |x| x.0.to_string()),
            )),
            connections: Some(counter),
            retries: spec.common.retries,
        };
        let cpu0 = host::process_cpu_seconds();
        let tag = cell_plan.tag.as_deref().unwrap_or("");
        let resume = crate::run::Resume::from_entries(
            earlier
                .iter()
                .filter(|e| e.cell.as_deref() == Some(tag) && e.run == *run),
            spec.docs,
        );
        let o = crate::run::run_once(
            proto,
            fx,
            &cell_plan,
            *run,
            live.clone(),
            &manifest,
            resume.as_ref(),
        )
        .await?;
        let cpu = host::process_cpu_seconds() - cpu0;
        if live.interrupted.load(std::sync::atomic::Ordering::Relaxed) {
            // A partial run is not a result: --resume finishes its documents and records it.
            break;
        }
        let rec = CellRun {
            cell: cell.clone(),
            record: crate::report::run_record(&o),
            latency_histogram_us: metrics::encode_hist(&o.recorder.latency_us),
            client_cpu_s: metrics::round3(cpu),
        };
        write_atomic(
            &dir.join("runs")
                .join(format!("{}.json", cell.file_stem(*run))),
            &serde_json::to_string_pretty(&rec)?,
        )?;
        if manifest.broken() {
            break;
        }
        if let Some(reason) = o.fatal {
            fatal = Some(format!(
                "access method {}: the repository rejected the documents: {reason}",
                cell.method
            ));
            break;
        }
    }
    progress.finish().await;
    signals.abort();
    drop(embedded);
    let interrupted = live.interrupted.load(std::sync::atomic::Ordering::Relaxed);

    let (plan, runs) = load_dir(&dir)?;
    let summary = summarize(&plan, &runs);
    let written = write_reports(&dir, &summary)?;
    if let Err(e) = manifest.flush() {
        bail!(
            "{e:#}\n  finished runs are saved in {0}; finish with: ingestbench sweep --resume {0}",
            dir.display()
        );
    }
    if let Some(f) = fatal {
        bail!(
            "{f}\n  check --profile and --parent; partial results in {}",
            dir.display()
        );
    }
    if !quiet {
        eprintln!();
        for f in export::findings(&summary) {
            eprintln!("  {f}");
        }
        for w in &summary.warnings {
            eprintln!("  warning: {w}");
        }
        for p in &written {
            eprintln!("  wrote {}", p.display());
        }
    }
    if interrupted {
        eprintln!(
            "interrupted: finished runs are saved in {0}; finish with: ingestbench sweep --resume {0}",
            dir.display()
        );
        return Ok((Outcome::Interrupted, summary));
    }
    let html = dir.join("report.html");
    println!("{}", html.display());
    let outcome = if summary.cells.iter().any(|c| c.docs_failed > 0) {
        Outcome::Failures
    } else {
        Outcome::Success
    };
    Ok((outcome, summary))
}
