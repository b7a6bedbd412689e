//! What a number can be trusted to say, and what limited it: the three-way verdict on a
//! comparison (significant, no significant difference, too noisy to tell), the servers' CPU
//! and memory over a cell's runs, and the likely bottleneck. With the resources read over
//! the measured windows, the bottleneck is `analysis::verdict`'s (demands, bound, what-ifs,
//! judged against the sweep's scaling rows): this is the one place reports call it from.
//! Results made before resources were read keep the older CPU-share judgement. Pure
//! functions on records.

use serde::{Deserialize, Serialize};

use crate::analysis::demands::{self, Demand, RunInput};
pub use crate::analysis::stats::{DECISIVE_PCT, Verdict, verdict};
use crate::analysis::verdict::{self, ScalingEvidence, Verdict as ResourceVerdict};
use crate::metrics::resources::RunResources;
use crate::metrics::servers::ServerUsage;

/// A client using this share of all cores may be what was measured.
pub const CLIENT_SATURATED: f64 = 0.9;

/// A server using this share of its cores is the likely limit.
pub const SERVER_SATURATED: f64 = 0.85;

/// The words for a verdict: `what` is the comparison (e.g. "https-lb vs direct at 4
/// threads"), `cv_pct` the larger coefficient of variation of the two sides.
pub fn verdict_text(v: Verdict, d: f64, h: f64, cv_pct: f64) -> String {
    match v {
        Verdict::Slower => format!("{:.1} % ± {h:.1} % slower", d.abs()),
        Verdict::Faster => format!("{:.1} % ± {h:.1} % faster", d.abs()),
        Verdict::NoDifference => format!("no significant difference ({d:+.1} % ± {h:.1} %)"),
        Verdict::TooNoisy => format!(
            "too noisy to tell ({d:+.1} % ± {h:.1} %, CV {cv_pct:.0} %): run more (--precision)"
        ),
    }
}

/// One server over a cell's runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerSummary {
    pub name: String,
    pub source: String,
    /// Mean over the runs that could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_share: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_cores: Option<f64>,
    /// The largest reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// Why some or all runs could not be read (the first reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Each server's use over a cell's runs, in first-seen order.
pub fn servers_of<'a>(runs: impl Iterator<Item = &'a [ServerUsage]>) -> Vec<ServerSummary> {
    let mut acc: Vec<(ServerSummary, f64, f64, u32)> = Vec::new();
    for run in runs {
        for u in run {
            let i = match acc.iter().position(|a| a.0.name == u.name) {
                Some(i) => i,
                None => {
                    acc.push((
                        ServerSummary {
                            name: u.name.clone(),
                            source: u.source.clone(),
                            cpu_share: None,
                            cpu_cores: None,
                            memory_bytes: None,
                            error: None,
                        },
                        0.0,
                        0.0,
                        0,
                    ));
                    acc.len() - 1
                }
            };
            let a = &mut acc[i];
            if let (Some(s), Some(c)) = (u.cpu_share, u.cpu_cores) {
                a.1 += s;
                a.2 += c;
                a.3 += 1;
            }
            if let Some(m) = u.memory_bytes {
                a.0.memory_bytes = Some(a.0.memory_bytes.unwrap_or(0).max(m));
            }
            if a.0.error.is_none() {
                a.0.error.clone_from(&u.error);
            }
        }
    }
    acc.into_iter()
        .map(|(mut s, share, cores, n)| {
            if n > 0 {
                s.cpu_share = Some(round3(share / f64::from(n)));
                s.cpu_cores = Some(round3(cores / f64::from(n)));
            }
            s
        })
        .collect()
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// What most likely limited a cell.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Bottleneck {
    /// `client`, `server_cpu`, `host_cpu`, `latency`, `schedule` (a paced run that kept up)
    /// or `unknown`.
    pub kind: String,
    pub text: String,
}

/// The demands of a cell's runs: `(docs_ok, resources)` per run (empty for results made
/// before resources were read).
pub fn cell_demands<'a>(
    runs: impl Iterator<Item = (u64, Option<&'a RunResources>)>,
) -> Vec<Demand> {
    let inputs: Vec<RunInput<'_>> = runs
        .filter_map(|(docs_ok, r)| r.map(|resources| RunInput { docs_ok, resources }))
        .collect();
    if inputs.is_empty() {
        return Vec::new();
    }
    demands::demands(&inputs)
}

/// The verdict on one cell from its demands, Little's law and, in a sweep, the scaling
/// evidence of its method and size (`None` without demands).
pub fn judge(
    demands: &[Demand],
    threads: u64,
    docs_per_sec: f64,
    mean_latency_ms: f64,
    scaling: Option<&ScalingEvidence>,
) -> Option<ResourceVerdict> {
    if demands.is_empty() {
        return None;
    }
    let mut v = verdict::verdict(demands, scaling);
    v.little = demands::little(threads, docs_per_sec, mean_latency_ms);
    Some(v)
}

/// The likely limit from the client's share of this machine's cores and the servers' use.
pub fn bottleneck(client_share: f64, servers: &[ServerSummary]) -> Bottleneck {
    let b = |kind: &str, text: String| Bottleneck {
        kind: kind.into(),
        text,
    };
    if client_share >= CLIENT_SATURATED {
        return b(
            "client",
            format!(
                "ingestbench itself ({:.0} % of this machine's cores): the numbers may measure the client",
                client_share * 100.0
            ),
        );
    }
    let read: Vec<&ServerSummary> = servers.iter().filter(|s| s.cpu_share.is_some()).collect();
    if let Some(s) = read
        .iter()
        .filter(|s| s.cpu_share.unwrap_or(0.0) >= SERVER_SATURATED)
        .max_by(|a, b| a.cpu_share.partial_cmp(&b.cpu_share).expect("finite"))
    {
        return b(
            "server_cpu",
            format!(
                "the server's CPU: {} at {:.0} % of its cores",
                s.name,
                s.cpu_share.unwrap_or(0.0) * 100.0
            ),
        );
    }
    // Local servers share this machine with the client.
    let local: f64 = read
        .iter()
        .filter(|s| s.source == "proc")
        .map(|s| s.cpu_share.unwrap_or(0.0))
        .sum();
    if !read.is_empty() && local > 0.0 && client_share + local >= CLIENT_SATURATED {
        return b(
            "host_cpu",
            format!(
                "this machine's CPU: ingestbench {:.0} % and the local server {:.0} % of its cores",
                client_share * 100.0,
                local * 100.0
            ),
        );
    }
    if read.is_empty() {
        return b(
            "unknown",
            "not known: the server's CPU was not measured (give --server-metrics URL of its node_exporter)".into(),
        );
    }
    b(
        "latency",
        format!(
            "neither CPU (client {:.0} %, busiest server {:.0} %): latency-bound or serializing (a sweep over threads tells which)",
            client_share * 100.0,
            read.iter()
                .map(|s| s.cpu_share.unwrap_or(0.0))
                .fold(0.0, f64::max)
                * 100.0
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(name: &str, source: &str, share: Option<f64>) -> ServerSummary {
        ServerSummary {
            name: name.into(),
            source: source.into(),
            cpu_share: share,
            cpu_cores: share.map(|s| s * 2.0),
            memory_bytes: None,
            error: None,
        }
    }

    #[test]
    fn verdicts_say_only_what_the_interval_allows() {
        assert_eq!(verdict(-10.0, 3.0), Verdict::Slower);
        assert_eq!(verdict(4.0, 1.0), Verdict::Faster);
        assert_eq!(verdict(-1.0, 2.0), Verdict::NoDifference);
        assert_eq!(verdict(-29.6, 168.5), Verdict::TooNoisy);
        assert!(verdict_text(Verdict::TooNoisy, -29.6, 168.5, 80.0).contains("--precision"));
    }

    #[test]
    fn the_likely_limit_is_named() {
        let remote = |s| vec![server("http://db:9100/metrics", "node_exporter", Some(s))];
        assert_eq!(bottleneck(0.95, &remote(0.2)).kind, "client");
        assert_eq!(bottleneck(0.2, &remote(0.9)).kind, "server_cpu");
        assert_eq!(bottleneck(0.2, &remote(0.3)).kind, "latency");
        assert_eq!(bottleneck(0.2, &[]).kind, "unknown");
        let local = vec![server("embedded target", "proc", Some(0.5))];
        assert_eq!(bottleneck(0.45, &local).kind, "host_cpu");
    }

    #[test]
    fn servers_average_over_runs_and_keep_errors() {
        let u = |s: Option<f64>, e: Option<&str>| ServerUsage {
            name: "x".into(),
            source: "node_exporter".into(),
            cpu_cores: s,
            cpu_share: s,
            memory_bytes: Some(5),
            age_s: None,
            cpu_used_s: None,
            error: e.map(str::to_string),
        };
        let runs = [
            vec![u(Some(0.2), None)],
            vec![u(Some(0.4), None)],
            vec![u(None, Some("down"))],
        ];
        let s = servers_of(runs.iter().map(|r| r.as_slice()));
        assert_eq!(s[0].cpu_share, Some(0.3));
        assert_eq!(s[0].error.as_deref(), Some("down"));
    }
}
