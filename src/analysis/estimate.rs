//! The migration estimate: how long importing a whole corpus takes, per measured access
//! method, connection policy and thread count, with a 95 % interval.
//!
//! **Model.** At a given method, policy and thread count, the wall-clock cost of one document
//! is `t(b) = a + c·b` seconds for a document of `b` bytes: `a` the per-document cost (request,
//! metadata, the repository's work per node), `c` the per-byte cost. Each measured run of a
//! cell gives one observation `t = 1 / (docs/s)` at that cell's document size; `a` and `c` are
//! the least-squares line through the cells' mean `t` over their sizes (sweeps with several
//! size classes, or `sweep --corpus` which takes its sizes from the corpus). The corpus then
//! takes `T = N·a + c·B` (N documents, B bytes; versions and folders add requests to N and
//! their bytes to B, see [`work`]). `T` is linear in the cells' means, so its
//! variance is the weighted sum of their variances (run-to-run spread / runs), and the 95 %
//! interval uses Student's t with Welch–Satterthwaite degrees of freedom. With one size
//! measured, every document is assumed to cost what that size costs (and this is flagged).
//!
//! **Growth.** The repository may slow down as it fills: `growth.rs` fits that from the
//! sweep's own runs (flat or linear in the documents stored) and the duration is scaled by
//! `1 + γ·L` for the import's lever `L` (its mean fill against the sample's; `--existing-docs`
//! adds documents the repository will already hold). The interval adds γ's uncertainty times
//! the lever to the run-to-run spread (delta method, Welch–Satterthwaite degrees of freedom),
//! so a sample that cannot rule growth out yields a wide interval, not a confident guess; and
//! since the import is one run, not a mean of runs, the spread of a single run (the sample's
//! pooled relative variance) too: it is a prediction interval for the import's duration.
//! Assumed: sizes outside the measured range follow the line (flagged with their share), and
//! growth stays linear beyond the fill levels measured (the lever says how far). What no
//! sample run can show (generated documents in short runs against one long import of real
//! files) joins the interval as a relative model error (`MODEL_ERROR`, calibrated).
//!
//! The model (weighted fits, the interval, growth, the overhead correction) and the sentences
//! that state it (answer, findings, bucket shares) live together: they are checked against
//! each other and read together.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::timefmt::human_hours;

use super::scaling::{mean_var, t975};
use crate::corpus::CorpusDescription;
use crate::results::{CellRun, PlanRecord};
use crate::transport::ConnectionPolicy;

/// The relative error (one σ) of the model itself: between a sample of generated documents
/// in short runs and one long import of real files into a tree of folders, what the sample
/// cannot measure. Calibrated where the model is exact (the embedded target, linear case of
/// scripts/estimate-accuracy.sh, 10 trials: median |predicted/measured − 1| 1.6 %, at most
/// 6.8 %, so 2.5 % is one σ of what the other terms leave out).
pub const MODEL_ERROR: f64 = 0.025;

/// One option the team can choose: a method, a policy and a thread count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OptionEstimate {
    pub method: String,
    pub connection: ConnectionPolicy,
    pub threads: u64,
    /// Predicted duration of the whole import, and the half-width of its 95 % interval.
    pub duration_s: f64,
    pub ci95_s: f64,
    /// The same in hours (for people; `duration_s` is exact).
    pub hours: f64,
    pub ci95_hours: f64,
    /// Fitted cost per document (s) and per MiB (s) at this thread count.
    pub per_doc_s: f64,
    pub per_mib_s: f64,
    /// Document sizes (bytes) measured for this option.
    pub sizes_measured: Vec<u64>,
    /// Extrapolations and other caveats of this option's estimate.
    pub flags: Vec<String>,
    /// The factor growth applies to the duration measured (1 + γ·L; 1 when flat).
    #[serde(default = "one")]
    pub growth_factor: f64,
    /// What the import would take if the resource that limited the option's runs were
    /// relieved (`analysis::relieved`; where resources were read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub if_relieved: Option<super::relieved::IfRelieved>,
    /// The 95 % interval's bounds (s) where its sides differ (a pilot's risks that act on one
    /// side: growth, a young server); absent: `duration_s ± ci95_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_lo_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_hi_s: Option<f64>,
}

impl Estimate {
    /// The prior this estimate gives the import's live ETA: its uploads (documents and their
    /// versions, the unit the ETA counts a corpus import's work in) over its duration for the
    /// option at `threads` (else its first, the answer's), and its interval's larger side as
    /// the spread (1 sd in log space). `None`: no option with a duration.
    pub fn eta_prior(&self, threads: u64) -> Option<(f64, f64)> {
        let o = self
            .options
            .iter()
            .find(|o| o.threads == threads)
            .or(self.options.first())?;
        let d = o.duration_s;
        let (lo, hi) = o.bounds_s();
        let sd = (hi / d).ln().max((d / lo.max(d * 0.01)).ln()) / 1.96;
        let uploads = (self.documents + self.versions) as f64;
        (d > 0.0 && uploads > 0.0 && sd.is_finite() && sd > 0.0).then(|| (uploads / d, sd))
    }
}

impl OptionEstimate {
    /// The 95 % interval's bounds in seconds.
    pub fn bounds_s(&self) -> (f64, f64) {
        (
            self.duration_lo_s
                .unwrap_or((self.duration_s - self.ci95_s).max(0.0)),
            self.duration_hi_s.unwrap_or(self.duration_s + self.ci95_s),
        )
    }
    /// The 95 % interval's bounds in hours.
    pub fn bounds_hours(&self) -> (f64, f64) {
        let (lo, hi) = self.bounds_s();
        (lo / 3600.0, hi / 3600.0)
    }
    /// The interval as a table shows it: `± 5.0 min`, or `-3.1 min / +9.2 min` where its
    /// sides differ.
    pub fn spread_text(&self) -> String {
        let (lo, hi) = self.bounds_hours();
        let (down, up) = (self.hours - lo, hi - self.hours);
        if self.duration_lo_s.is_none() || (down - up).abs() <= 0.05 * up.max(down) {
            format!("± {}", human_hours(self.ci95_hours))
        } else {
            format!("-{} / +{}", human_hours(down), human_hours(up))
        }
    }
}

fn one() -> f64 {
    1.0
}

/// Share of the predicted time spent on one size bucket.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BucketShare {
    pub lo_bytes: u64,
    pub hi_bytes: u64,
    pub documents: u64,
    pub share_pct: f64,
}

/// `estimate.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Estimate {
    pub corpus: String,
    pub documents: u64,
    pub bytes: u64,
    /// Every option, fastest first.
    pub options: Vec<OptionEstimate>,
    /// Where the time goes for the fastest option, largest share first.
    pub time_by_size: Vec<BucketShare>,
    /// Plain-language conclusions.
    pub findings: Vec<String>,
    pub assumptions: Vec<String>,
    /// The option to use, in one sentence (the fastest, or the fewest threads not
    /// significantly slower than it).
    #[serde(default)]
    pub answer: String,
    /// Documents the repository will already hold beyond what it held when measured.
    #[serde(default)]
    pub existing_docs: u64,
    /// How cost grows with the documents stored, fitted from the sweep's runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub growth: Option<super::growth::Growth>,
    /// The corpus's versions (`.vN` files, uploaded before their heads) and their bytes.
    #[serde(default)]
    pub versions: u64,
    #[serde(default)]
    pub version_bytes: u64,
    /// Folders the import creates (the corpus's tree below the import's folder).
    #[serde(default)]
    pub folders: u64,
    /// Requests the import makes besides one upload per document (see [`work`]), each
    /// costed as a document's fixed cost `a`; the versions' bytes at the per-byte cost.
    #[serde(default)]
    pub extra_requests: u64,
    /// `--existing-docs` was given (else `existing_docs` is what the measurement left).
    #[serde(default)]
    pub existing_docs_given: bool,
    /// The pilot import's fit, when the estimate comes from one ([`super::pilot`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pilot: Option<super::pilot::PilotFit>,
    /// The plan for the team's window (`estimate --window`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowPlan>,
}

/// One configuration against the window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WindowRow {
    pub method: String,
    pub connection: String,
    pub threads: u64,
    /// The what-if applied (`two_nodes`, `client_on_its_own_host`, …); absent: as measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub what_if: Option<String>,
    /// Predicted duration and its 95 % interval, s.
    pub duration_s: f64,
    pub duration_lo_s: f64,
    pub duration_hi_s: f64,
    /// Full-speed time the window holds for this configuration (the window less what office
    /// hours take), s.
    pub window_s: f64,
    /// Probability of finishing inside the window, 0–1.
    pub p_finish: f64,
    /// `meets`, `at risk` or `misses`.
    pub outcome: String,
    /// Window less the interval's upper bound, s (negative: short by that much).
    pub margin_s: f64,
    /// What to add first: the change that relieves what limited the measured runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_first: Option<String>,
    /// A what-if row: the fewest threads that reach 90 % of its raised bound (mean value
    /// analysis of the runs' demands); more than `threads` means the change needs more
    /// threads to pay off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_to_90_pct: Option<u32>,
}

/// `estimate.json`'s `window`: the plan for the team's window (`analysis::window` makes it).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WindowPlan {
    /// The window as given, and its length, s.
    pub window: String,
    pub window_s: f64,
    /// Office hours inside the window, their total, s, and the import's rate in them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub office_hours: Option<String>,
    #[serde(default)]
    pub office_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub office_rate_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub office_rate_source: Option<String>,
    /// Every configuration, measured first (fastest first), then the what-ifs.
    pub rows: Vec<WindowRow>,
    /// The plan in one sentence.
    pub answer: String,
}

/// What the import asks of the repository: (requests, bytes) counted as `a` and `c` costs.
/// One upload per document, plus the requests the protocol says a version, a version's
/// properties update and a folder cost ([`crate::protocol::facts::Requests`]: CMIS a
/// check-out and a check-in per version; Alfresco a properties update where the metadata
/// changes from one version to the next, and no request of its own per folder). A document
/// with 5 versions thus costs what 6 uploads cost, and more where the API needs more calls
/// per version.
pub fn work(
    corpus: &CorpusDescription,
    protocol: crate::protocol_kind::ProtocolKind,
) -> (f64, f64, u64) {
    let per = crate::protocol::facts::of(protocol).requests;
    let sh = &corpus.shadow;
    let versions = sh.version_content_files;
    let folders = if corpus.kind == "directory" {
        corpus.directories
    } else {
        corpus.folders
    };
    let extra = per.per_version * versions
        + per.per_property_update * sh.version_property_updates
        + per.per_folder * folders;
    (
        corpus.documents as f64 + extra as f64,
        (corpus.bytes + sh.version_bytes) as f64,
        extra,
    )
}

/// A cell's observations: its document size, one `t = 1/rate` per run, and its drift.
struct Point {
    bytes: u64,
    times: Vec<f64>,
    drift: Option<crate::analysis::scaling::Drift>,
}

/// Least-squares weights: `a = Σ α·t̄`, `c = Σ γ·t̄` over the points' means.
fn weights(sizes: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let m = sizes.len() as f64;
    let mean = sizes.iter().sum::<f64>() / m;
    let sbb: f64 = sizes.iter().map(|b| (b - mean).powi(2)).sum();
    if sbb == 0.0 {
        return (vec![1.0 / m; sizes.len()], vec![0.0; sizes.len()]);
    }
    let gamma: Vec<f64> = sizes.iter().map(|b| (b - mean) / sbb).collect();
    let alpha = gamma.iter().map(|g| 1.0 / m - mean * g).collect();
    (alpha, gamma)
}

/// The import's seconds from the points' means, before growth and overhead: the costs `a`
/// (per request) and `c` (per byte), `t = n·a + b·c`, its variance and degrees of freedom
/// (Welch–Satterthwaite), and each point's (mean, variance of the mean, runs).
struct Base {
    a: f64,
    c: f64,
    t: f64,
    var: f64,
    df: f64,
    stats: Vec<(f64, f64, usize)>,
}

/// [`Base`] for `n` requests and `b` bytes.
fn base(points: &[Point], n: f64, b: f64) -> Base {
    let sizes: Vec<f64> = points.iter().map(|p| p.bytes as f64).collect();
    let (alpha, gamma) = weights(&sizes);
    let stats: Vec<(f64, f64, usize)> = points
        .iter()
        .map(|p| {
            let (m, v) = mean_var(&p.times);
            (m, v / p.times.len() as f64, p.times.len())
        })
        .collect();
    let a: f64 = alpha.iter().zip(&stats).map(|(w, s)| w * s.0).sum();
    let c: f64 = gamma.iter().zip(&stats).map(|(w, s)| w * s.0).sum();
    let w: Vec<f64> = alpha
        .iter()
        .zip(&gamma)
        .map(|(al, ga)| n * al + b * ga)
        .collect();
    let t = n * a + b * c;
    let var: f64 = w.iter().zip(&stats).map(|(w, s)| w * w * s.1).sum();
    let denom: f64 = w
        .iter()
        .zip(&stats)
        .filter(|(_, s)| s.2 > 1)
        .map(|(w, s)| (w * w * s.1).powi(2) / (s.2 - 1) as f64)
        .sum();
    let df = if denom > 0.0 {
        var * var / denom
    } else {
        f64::INFINITY
    };
    Base {
        a,
        c,
        t,
        var,
        df,
        stats,
    }
}

/// The import's own run-to-run variance at `t` seconds (the sample's pooled relative
/// variance of a run) and its degrees of freedom.
fn run_variance(stats: &[(f64, f64, usize)], t: f64) -> (f64, f64) {
    let (cv2_sum, df_run) =
        stats
            .iter()
            .filter(|s| s.2 > 1 && s.0 > 0.0)
            .fold((0.0, 0.0), |(acc, d), s| {
                let runs = s.2 as f64;
                (
                    acc + s.1 * runs / (s.0 * s.0) * (runs - 1.0),
                    d + runs - 1.0,
                )
            });
    let var_run = if df_run > 0.0 {
        t.powi(2) * cv2_sum / df_run
    } else {
        0.0
    };
    (var_run, df_run)
}

/// The estimate for one option from its points.
fn option(
    corpus: &CorpusDescription,
    protocol: crate::protocol_kind::ProtocolKind,
    key: &OptionKey,
    points: &[Point],
    growth: Option<(&super::growth::Growth, f64)>,
    overhead: &[(f64, f64)],
) -> OptionEstimate {
    // Documents, versions and folders as requests at `a` each; all their bytes at `c`.
    let (n, b, _) = work(corpus, protocol);
    let Base {
        a,
        c,
        t,
        var,
        df,
        stats,
    } = base(points, n, b);
    // Growth: every document costs γ·L more on average (L the lever); γ's uncertainty times
    // N·L joins the run-to-run variance, degrees of freedom by Welch–Satterthwaite.
    let (extra, var_g, df_g) = match growth {
        Some((g, lever)) => (
            (n * g.shift(lever)).max(-t * 0.5),
            (n * lever * g.se()).powi(2),
            g.df,
        ),
        None => (0.0, 0.0, f64::INFINITY),
    };
    // Each sample run pays a fixed overhead once (workers starting together, the tail where
    // fewer than all are busy), which its docs/sec spreads over its few documents; the import
    // pays it once over N. Measured per run as its duration minus its documents at the
    // steady cost between the 10 % and 90 % marks; the correction's spread joins the variance.
    let (extra, var_o) = match overhead_correction(overhead, n) {
        Some((d, v)) => (extra + d, v),
        None => (extra, 0.0),
    };
    let factor = if t > 0.0 { (t + extra) / t } else { 1.0 };
    // The import is one run, not a mean of runs: its own run-to-run spread (the sample's
    // pooled relative variance of a run) joins the interval, which is a prediction interval.
    let (var_run, df_run) = run_variance(&stats, t + extra);
    // The import ends when its last documents finish: the idle time of its tail lies
    // between none and one document's latency at this concurrency (Little: threads × the
    // per-document time, at the corpus's 99th-percentile size). The sample's overhead
    // correction takes out the mean tail; where in that range the import's own tail falls is
    // uniform, variance L²/12, known (no degrees of freedom lost).
    let latency = key.2 as f64 * (a + c * corpus.sizes.p99 as f64).max(0.0);
    let var_tail = latency * latency / 12.0;
    // What no sample run can show: the import's real files, folders and hours against the
    // sample's generated documents and seconds. A relative error of MODEL_ERROR (one σ),
    // calibrated by scripts/estimate-accuracy.sh where the model itself is exact (the
    // embedded target's linear case), known (no degrees of freedom lost).
    let var_model = (MODEL_ERROR * (t + extra)).powi(2);
    let var_base = var + var_o;
    let total = var_base + var_g + var_run + var_tail + var_model;
    let ws = |v: f64, d: f64| {
        if d.is_finite() && d > 0.0 {
            v * v / d
        } else {
            0.0
        }
    };
    let df = match ws(var_base, df) + ws(var_g, df_g) + ws(var_run, df_run) {
        d if d > 0.0 => total * total / d,
        _ => f64::INFINITY,
    };
    let t = t + extra;
    let half = t975(df) * total.sqrt();
    let mut measured: Vec<u64> = points.iter().map(|p| p.bytes).collect();
    measured.sort_unstable();
    measured.dedup();
    let flags = flags(corpus, &measured, a, c, points);
    OptionEstimate {
        method: key.0.clone(),
        connection: key.1,
        threads: key.2,
        duration_s: round(t, 3),
        ci95_s: round(half, 3),
        hours: round(t / 3600.0, 6),
        ci95_hours: round(half / 3600.0, 6),
        per_doc_s: round(a, 9),
        per_mib_s: round(c * 1_048_576.0, 9),
        sizes_measured: measured,
        flags,
        growth_factor: round(factor, 6),
        if_relieved: None,
        duration_lo_s: None,
        duration_hi_s: None,
    }
}

/// The import's correction for the sample runs' fixed overhead, and its variance: runs of
/// `n` documents with overhead `o` each overstate the cost of N documents by `o·(N/n − 1)`.
fn overhead_correction(samples: &[(f64, f64)], n_import: f64) -> Option<(f64, f64)> {
    if samples.len() < 2 {
        return None;
    }
    let o: Vec<f64> = samples.iter().map(|s| s.0).collect();
    let (m, v) = mean_var(&o);
    let n = samples.iter().map(|s| s.1).sum::<f64>() / samples.len() as f64;
    let k = (n_import / n - 1.0).max(0.0);
    Some((-m * k, v / o.len() as f64 * k * k))
}

/// A run's fixed overhead: its duration minus its documents at the steady cost between the
/// 10 % and 90 % marks (count-mode runs with their ten marks only).
fn run_overhead(r: &crate::results::RunRecord) -> Option<(f64, f64)> {
    let p = &r.progress_s;
    if p.len() != 10 || r.window_s.is_some() || r.docs_ok < 20 || p[8] <= p[0] {
        return None;
    }
    let n = r.docs_ok as f64;
    let steady = (p[8] - p[0]) / (0.8 * n);
    Some((r.duration_s - n * steady, n))
}

fn round(v: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (v * f).round() / f
}

/// What the estimate of one option extrapolates or cannot know.
fn flags(
    corpus: &CorpusDescription,
    measured: &[u64],
    a: f64,
    c: f64,
    points: &[Point],
) -> Vec<String> {
    let mut out = Vec::new();
    let (lo, hi) = (measured[0], *measured.last().expect("a point"));
    if measured.len() == 1 {
        out.push(format!(
            "one document size measured ({}): every document is assumed to cost the same; measure several sizes (sweep --corpus) to model cost per byte",
            human_bytes(lo)
        ));
    }
    let above = corpus.bytes_above(hi);
    if above > 0 && corpus.bytes > 0 {
        out.push(format!(
            "{:.0} % of the corpus's bytes are in documents larger than the largest measured size ({}): extrapolated",
            above as f64 * 100.0 / corpus.bytes as f64,
            human_bytes(hi)
        ));
    }
    let below: u64 = corpus
        .size_histogram
        .iter()
        .filter(|b| b.hi_bytes <= lo)
        .map(|b| b.files)
        .sum();
    if below > 0 && corpus.documents > 0 {
        out.push(format!(
            "{:.0} % of the documents are smaller than the smallest measured size ({}): extrapolated",
            below as f64 * 100.0 / corpus.documents as f64,
            human_bytes(lo)
        ));
    }
    if a < 0.0 || c < 0.0 {
        out.push("the fitted per-document or per-byte cost is negative: the measured sizes are too close or too noisy; run more runs or sizes further apart".into());
    }
    if let Some(d) = points
        .iter()
        .filter_map(|p| p.drift.as_ref())
        .filter(|d| d.significant && d.end_vs_start < 1.0)
        .min_by(|x, y| x.end_vs_start.total_cmp(&y.end_vs_start))
    {
        out.push(format!(
            "{} in the measured cells: the import, far longer, is likely slower than estimated",
            d.text()
        ));
    }
    if points.iter().any(|p| p.times.len() < 2) {
        out.push("a cell has a single run: its spread is unknown, so the interval is too narrow; use --runs 3 or more".into());
    }
    out
}

/// The caveat for files larger than any the pilot sent ([`super::pilot::larger_than_sent`]).
fn unsent_note(u: super::pilot::Unsent) -> String {
    let one = u.files == 1;
    format!(
        "{} {}, {:.0} % of the corpus's bytes, {} larger than any the pilot sent (its largest under {}): the estimate prices their bytes at what a byte of the pilot's sizes cost, and a server may charge more above some size (OpenCMIS writes an upload over 4 MiB to a temporary file first: on FileShare a byte there took 2× as long unthrottled, 3–4× under a quota); a pilot that draws more of the corpus (--max-sample-share) sends some of them",
        u.files,
        if one { "file" } else { "files" },
        u.share * 100.0,
        if one { "is" } else { "are" },
        human_bytes(u.above_bytes)
    )
}

/// Bytes for people: B, KiB, MiB, GiB.
pub fn human_bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < units.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// Estimates the corpus's import from the sweeps' runs, into a repository that will hold
/// `existing_docs` more documents than when it was measured.
pub fn estimate(
    corpus: &CorpusDescription,
    sweeps: &[(PlanRecord, Vec<CellRun>)],
    existing_docs: u64,
) -> Estimate {
    estimate_from(corpus, sweeps, Some(existing_docs))
}

/// Documents the measured runs left in the repository (measured, warm-up, after a window,
/// failed: a failed upload may have stored it), summed over the results.
pub fn left_by(sweeps: &[(PlanRecord, Vec<CellRun>)]) -> u64 {
    sweeps
        .iter()
        .flat_map(|(_, runs)| runs)
        .map(|r| {
            let rec = &r.record;
            rec.docs_ok + rec.warmup_docs + rec.docs_after_window + rec.docs_failed
        })
        .sum()
}

/// [`estimate`], with `existing_docs` absent when the import goes into the repository the
/// measurement filled: it starts at what the measurement left ([`left_by`]; a pilot counts
/// its folders and versions too). Pilot imports (`run --corpus DIR`, [`super::pilot`]) are
/// estimated by their own model, size-class sweeps by the one here.
pub fn estimate_from(
    corpus: &CorpusDescription,
    sweeps: &[(PlanRecord, Vec<CellRun>)],
    existing: Option<u64>,
) -> Estimate {
    // A run of a directory's real files in their tree is a pilot import.
    let (pilots, sweeps): (Vec<_>, Vec<_>) = sweeps.iter().cloned().partition(|(p, runs)| {
        p.kind == crate::results::PlanKind::Run
            && p.corpus_names.is_some()
            && p.corpus_tree
            && !runs.is_empty()
    });
    let existing_docs = existing.unwrap_or_else(|| left_by(&sweeps));
    let mut e = estimate_sweeps(corpus, &sweeps, existing_docs);
    e.existing_docs_given = existing.is_some();
    let mut too_short = Vec::new();
    for (plan, runs) in &pilots {
        let work = super::pilot::ImportWork::of(corpus, plan.protocol);
        let refs: Vec<&CellRun> = runs.iter().collect();
        let Some((t, half, fit)) = super::pilot::predict(&refs, plan.protocol, &work, existing)
        else {
            too_short.push(super::pilot::too_short(&refs));
            continue;
        };
        let cell = &runs[0].cell;
        let mut flags = Vec::new();
        if let Some(n) = &fit.needed {
            flags.push(format!(
                "interval wider than ±{:.0} %: {n}",
                super::pilot::TARGET * 100.0
            ));
        }
        if let Some(g) = &fit.unresolved_growth {
            flags.push(format!("growth not resolved: {g}"));
        }
        if fit.growth_model == "warming" {
            flags.push(format!("the cost fell through the pilot ({:+.1} % per 1,000 objects): was the server still warming up? A JVM just started runs slow for its first minute or more of load; the estimate takes the pilot's mean; give a server just started 100 s of work before the pilot (--warmup 100s) to know", fit.growth_per_1000 * 100.0));
        }
        if fit.growth_model == "carried" {
            flags.push(format!("the cost grew through the pilot ({:+.2} % per 1,000 objects stored) and from its first run to its last ({:+.1} %), the same slice each time: the repository slows as it fills, and the estimate carries the growth over the import's fill; if it stops slowing where the pilot left it, the import takes about {} ({:.0} % less), and the interval reaches that", fit.growth_per_1000 * 100.0, fit.run_drift.unwrap_or(0.0) * 100.0, human_hours(fit.if_growth_stops_s.unwrap_or(t) / 3600.0), 100.0 * (1.0 - fit.if_growth_stops_s.unwrap_or(t) / t)));
        }
        if let Some(y) = super::pilot::young_server(&refs) {
            flags.push(y);
        }
        if let Some(u) = super::pilot::larger_than_sent(&refs, corpus) {
            flags.push(unsent_note(u));
        }
        if let (Some(at), Some(rise)) = (fit.step_at_objects, fit.step_rise) {
            flags.push(format!("the cost stepped up {:+.0} % after {at:.0} objects stored and held (a cache or a heap's threshold?): the estimate takes the pace after the step; the interval's shorter side reaches the import at the pace before it, in case it was a swing", rise * 100.0));
        }
        if fit.growth_model == "growing" {
            flags.push(format!("the cost grew through the pilot ({:+.2} % per 1,000 objects stored): the estimate takes the pilot's mean cost, and the interval's upper side the growth carried over the import's fill at its 95 % bound; a pilot's trend on a warm server was more often its folders and its last seconds than the repository filling, and a longer pilot tells them apart", fit.growth_per_1000 * 100.0));
        }
        let h = t / 3600.0;
        e.options.push(OptionEstimate {
            method: cell.method.clone(),
            connection: cell.connection,
            threads: cell.threads,
            duration_s: round(t, 3),
            ci95_s: round(half, 3),
            hours: round(h, 4),
            ci95_hours: round(half / 3600.0, 4),
            per_doc_s: fit.s_per_request,
            per_mib_s: fit.s_per_mib,
            sizes_measured: Vec::new(),
            flags,
            growth_factor: 1.0,
            if_relieved: None,
            duration_lo_s: Some(round(t * (1.0 - fit.rel_lo), 3)),
            duration_hi_s: Some(round(t * (1.0 + fit.rel_hi), 3)),
        });
        if existing.is_none() {
            e.existing_docs = fit.fill_import_start as u64;
        }
        e.pilot = Some(fit);
    }
    e.options
        .sort_by(|x, y| x.duration_s.total_cmp(&y.duration_s));
    if e.pilot.is_none() && !too_short.is_empty() {
        if sweeps.is_empty() {
            e.findings.clear();
            e.answer = "no estimate: the pilot import is too short to read".into();
        }
        e.findings.extend(too_short);
    }
    if let Some(fit) = e.pilot.clone() {
        e.answer = answer(&e.options);
        if let Some(n) = &fit.narrowing {
            e.answer = format!("{}; {n}", e.answer);
        }
        e.time_by_size = Vec::new();
        if sweeps.is_empty() {
            e.findings.clear();
        }
        e.findings
            .insert(0, pilot_finding(&fit, existing.is_some()));
        e.assumptions = pilot_assumptions(&fit);
    }
    attach_relieved(&mut e, &[&pilots, &sweeps]);
    e
}

/// Sets each option's `if_relieved` from the demands of its runs (where resources were
/// read), and says the fastest option's in the findings. `sweeps`: the results estimated
/// from, in groups (pilots, size-class sweeps).
fn attach_relieved(e: &mut Estimate, sweeps: &[&[(PlanRecord, Vec<CellRun>)]]) {
    let mean_bytes = e.bytes as f64 / (e.documents.max(1)) as f64;
    for o in &mut e.options {
        let runs =
            super::relieved::option_runs(sweeps, &o.method, o.connection, o.threads, mean_bytes);
        let demands: Vec<super::demands::Demand> = super::limits::cell_demands(
            runs.iter()
                .map(|r| (r.record.docs_ok, r.record.resources.as_ref())),
        );
        if demands.is_empty() {
            continue;
        }
        let mut v = super::verdict::verdict(&demands, None);
        // The runs' own docs/s fits the curve's think time: how many threads each change
        // needs to reach its bound.
        let (docs, secs) = runs.iter().fold((0.0, 0.0), |(d, s), r| {
            (d + r.record.docs_ok as f64, s + r.record.duration_s)
        });
        if secs > 0.0 {
            let t = o.threads as u32;
            super::mva::draw(&mut v.what_if, (&demands, t, docs / secs), &[t]);
        }
        o.if_relieved = Some(super::relieved::if_relieved(&v, o.duration_s, o.bounds_s()));
    }
    if let Some(r) = e.options.first().and_then(|o| o.if_relieved.as_ref()) {
        e.findings.push(r.text.clone());
    }
}

/// What the pilot says about the import, in words.
fn pilot_finding(fit: &super::pilot::PilotFit, given: bool) -> String {
    let start = if given {
        format!(
            "the import starts with {:.0} objects stored (--existing-docs)",
            fit.fill_import_start
        )
    } else {
        format!(
            "the import goes into the repository the pilot filled: it starts with the {:.0} objects the pilot left (--existing-docs N says otherwise)",
            fit.fill_import_start
        )
    };
    let runs = match fit.run_drift {
        None => String::new(),
        Some(d) if d.abs() > super::pilot::DRIFT_LIMIT && fit.growth_model != "carried" => format!(
            "; the server moved {:+.1} % from the pilot's first run to its last (the level is the last run's)",
            d * 100.0
        ),
        Some(d) if fit.growth_model == "carried" => format!(
            "; {:+.1} % from the pilot's first run to its last, as the repository filled",
            d * 100.0
        ),
        Some(d) => format!(
            "; the pilot's runs agree ({:+.1} % from the first to the last: the server held still)",
            d * 100.0
        ),
    };
    format!(
        "from a pilot import of {} documents ({} folders, {} versions) in {:.1} s: {:.3} ms per request at its mix{runs}; growth {} ({:+.2} % ± {:.2} % per 1,000 objects stored); {start}; {}",
        fit.docs,
        fit.folders,
        fit.versions,
        fit.duration_s,
        fit.s_per_request * 1000.0,
        fit.growth_model,
        fit.growth_per_1000 * 100.0,
        fit.se_growth_per_1000 * 100.0,
        fit.needed
            .clone()
            .unwrap_or_else(|| super::pilot::sides_text(fit))
    )
}

fn pilot_assumptions(fit: &super::pilot::PilotFit) -> Vec<String> {
    let model = match fit.run_drift {
        None => format!(
            "what a pilot of {:.0} s cannot show (the import's hours against its minutes) is within ± {:.0} % (95 %), as calibrated on repositories and corpora the model was not written on (± 29 % for pilots of 10 s or less, narrower for longer ones: they have seen more of the server's swings)",
            fit.duration_s,
            196.0 * fit.model_error
        ),
        Some(d) => format!(
            "what a pilot cannot show is within ± {:.0} % (95 %): ± {:.0} % as calibrated on repositories and corpora the model was not written on, with what of the server's move between the pilot's runs ({:+.1} %) growth does not explain",
            196.0 * fit.model_error,
            196.0 * super::pilot::model_error_for(fit.duration_s),
            d * 100.0
        ),
    };
    vec![
        "the pilot is a random slice of the corpus imported as the import will be (its files, its tree, its threads, the same repository and access path)".into(),
        "the import's cost per request is the pilot's mean (its last run's, when the server moved between its runs): a trend through the pilot is not carried over the import (a significant one is said), and growth the pilot could not see is said as a caveat".into(),
        "the server was warm when the pilot ran, as a repository in use is: a JVM just started runs at a fraction of its speed for its first minute or more of load, in plateaus no warm-up rule can tell from the end (measured: 336 then 1,600 requests/s on OpenCMIS FileShare); if it was just started, 100 s of work before the pilot (--warmup 100s) settles it".into(),
        "the server stays in the regime the pilot saw: a heap's collection threshold, a cache that stops holding the working set or a disk that fills changes the cost in a step no pilot before it can see".into(),
        model,
    ]
}

/// An import option: access method, connection policy, threads.
type OptionKey = (String, ConnectionPolicy, u64);

/// Growth per option, from the sweep whose fit is the most precise (fill levels of
/// different sweeps do not compare: each counts from its own start).
fn growth_fits(
    sweeps: &[(PlanRecord, Vec<CellRun>)],
) -> BTreeMap<OptionKey, super::growth::Growth> {
    let mut fits: BTreeMap<OptionKey, super::growth::Growth> = BTreeMap::new();
    for (_, runs) in sweeps {
        let placed = super::growth::place(runs);
        let mut by: BTreeMap<OptionKey, Vec<_>> = BTreeMap::new();
        for p in placed {
            let c = &p.0.cell;
            by.entry((c.method.clone(), c.connection, c.threads))
                .or_default()
                .push(p);
        }
        for (k, v) in by {
            if let Some(g) = super::growth::fit(&v)
                && fits
                    .get(&k)
                    .is_none_or(|o| g.se_per_1000_docs < o.se_per_1000_docs)
            {
                fits.insert(k, g);
            }
        }
    }
    fits
}

/// Each run's start-and-tail overhead ([`run_overhead`]), per option.
fn overheads(sweeps: &[(PlanRecord, Vec<CellRun>)]) -> BTreeMap<OptionKey, Vec<(f64, f64)>> {
    let mut overheads: BTreeMap<OptionKey, Vec<(f64, f64)>> = BTreeMap::new();
    for (_, runs) in sweeps {
        for r in runs {
            if let Some(o) = run_overhead(&r.record) {
                let c = &r.cell;
                overheads
                    .entry((c.method.clone(), c.connection, c.threads))
                    .or_default()
                    .push(o);
            }
        }
    }
    overheads
}

/// Each option's points: one per size, its runs' times in run order.
fn points(sweeps: &[(PlanRecord, Vec<CellRun>)]) -> BTreeMap<OptionKey, Vec<Point>> {
    let mut groups: BTreeMap<OptionKey, Vec<Point>> = BTreeMap::new();
    for (plan, runs) in sweeps {
        // Each cell's runs in run order, as the sweep's summary takes them (this module
        // does not import the summary's: the summary carries the estimate).
        for (cell, mut rs) in plan.runs_by_cell(runs) {
            rs.sort_by_key(|r| r.record.run);
            let Some((_, bytes)) = plan.sizes.iter().find(|(s, _)| *s == cell.size) else {
                continue;
            };
            let times: Vec<f64> = rs
                .iter()
                .map(|r| r.record.docs_per_sec)
                .filter(|r| *r > 0.0)
                .map(|r| 1.0 / r)
                .collect();
            if times.is_empty() {
                continue;
            }
            groups
                .entry((cell.method.clone(), cell.connection, cell.threads))
                .or_default()
                .push(Point {
                    bytes: *bytes,
                    times,
                    drift: super::scaling::Drift::of_runs(
                        rs.iter().map(|r| r.record.progress_s.as_slice()),
                    ),
                });
        }
    }
    groups
}

/// The size-class estimate (`sweep --corpus`).
fn estimate_sweeps(
    corpus: &CorpusDescription,
    sweeps: &[(PlanRecord, Vec<CellRun>)],
    existing_docs: u64,
) -> Estimate {
    let fits = growth_fits(sweeps);
    let n_docs = corpus.documents as f64;
    let protocol = sweeps
        .first()
        .map_or(crate::protocol_kind::ProtocolKind::Alfresco, |(p, _)| {
            p.protocol
        });
    let (_, _, extra_requests) = work(corpus, protocol);
    let overheads = overheads(sweeps);
    let mut options: Vec<OptionEstimate> = points(sweeps)
        .iter()
        .map(|(k, pts)| {
            let g = fits.get(k);
            let lever = g.map(|g| g.lever(n_docs, existing_docs as f64));
            let o = overheads.get(k).map_or(&[][..], Vec::as_slice);
            option(corpus, protocol, k, pts, g.zip(lever), o)
        })
        .collect();
    options.sort_by(|x, y| x.duration_s.total_cmp(&y.duration_s));
    let time_by_size = options
        .first()
        .map(|o| shares(corpus, o))
        .unwrap_or_default();
    let mut findings = findings(&options, &time_by_size);
    // The growth of the fastest option speaks for the estimate.
    let growth = options
        .first()
        .and_then(|o| fits.get(&(o.method.clone(), o.connection, o.threads)))
        .cloned();
    let best_t_doc = options.first().map_or(0.0, |o| {
        o.duration_s / o.growth_factor.max(1e-9) / n_docs.max(1.0)
    });
    let lever = growth
        .as_ref()
        .map(|g| g.lever(n_docs, existing_docs as f64));
    let growth_line = growth_finding(growth.as_ref(), lever, (existing_docs, n_docs), best_t_doc);
    findings.insert(1.min(findings.len()), growth_line);
    Estimate {
        corpus: corpus.source.clone(),
        documents: corpus.documents,
        bytes: corpus.bytes,
        answer: answer(&options),
        options,
        time_by_size,
        findings,
        assumptions: vec![
            "growth with the documents stored is as fitted from the sample's runs (flat or linear), and stays linear beyond the fill levels measured".into(),
            "the repository, access path and client are the ones measured, and the server stays in the regime the sample saw (a server that crosses a threshold during the import, a heap's collection threshold, a cache that no longer holds the working set, changes its cost in a step no earlier sample can see)".into(),
            "document cost is linear in its size between and beyond the measured sizes (flagged where extrapolated)".into(),
            format!("what the sample cannot measure (its generated documents and short runs against the import's real files, folders and hours) is within ± {:.0} % (95 %), as calibrated on a target whose model is known", 196.0 * MODEL_ERROR),
            "each version costs what uploading its bytes costs (its API's calls for a version, each at a document's fixed cost) and each folder one request: what the repository adds per version beyond that (its version store) is not in a sample of documents without versions".into(),
        ],
        existing_docs,
        growth,
        versions: corpus.shadow.version_content_files,
        version_bytes: corpus.shadow.version_bytes,
        folders: if corpus.kind == "directory" {
            corpus.directories
        } else {
            corpus.folders
        },
        extra_requests,
        existing_docs_given: true,
        pilot: None,
        window: None,
    }
}

/// The growth model chosen, on what evidence, and what would resolve it.
fn growth_finding(
    g: Option<&super::growth::Growth>,
    lever: Option<f64>,
    (existing, n_docs): (u64, f64),
    t_doc: f64,
) -> String {
    let (Some(g), Some(lever)) = (g, lever) else {
        return "growth with the documents stored: not measured (fewer than 2 runs per cell with start times); the estimate assumes none and its interval does not cover it: use --runs 3 or more".into();
    };
    let mut line = format!(
        "growth model: {} — {}; the import's mean fill is {:.0} documents {} the sample's",
        g.model,
        g.evidence,
        lever.abs(),
        if lever >= 0.0 { "above" } else { "below" }
    );
    if existing > 0 {
        line.push_str(&format!(" (with {existing} documents already there)"));
    }
    // Where the import fills the repository beyond what the sample saw, the growth is carried
    // past its evidence: said with how far, since a growth that accelerates is not in it.
    let (from, to) = (existing as f64, existing as f64 + n_docs);
    let span = (g.stored_max - g.stored_min).max(1.0);
    if to > g.stored_max * 1.1 {
        line.push_str(&format!(
            "; the import fills it from {from:.0} to {to:.0} documents, beyond the {:.0}–{:.0} the sample measured ({:.1}× its span further): if growth accelerates, the estimate is low; a sample at a fill nearer the import's would tell",
            g.stored_min,
            g.stored_max,
            (to - g.stored_max) / span
        ));
    }
    if let Some(m) = g.resolving_factor(lever, t_doc) {
        line.push_str(&format!(
            "; the sample is too small to tell a growth that would lengthen the import by 10 % (its interval covers it): a sample about {m:.1}× larger per run would"
        ));
    }
    line
}

/// The option to use: the fewest threads whose duration is not significantly longer than
/// the fastest option's (their intervals overlap), on the fastest's access path first.
fn answer(options: &[OptionEstimate]) -> String {
    let Some(best) = options.first() else {
        return "no measured cells to estimate from".into();
    };
    let pick = options
        .iter()
        .filter(|o| o.bounds_s().0 <= best.bounds_s().1)
        .min_by_key(|o| {
            (
                o.method != best.method || o.connection != best.connection,
                o.threads,
            )
        })
        .unwrap_or(best);
    let why = if std::ptr::eq(pick, best) {
        "the fastest option measured".to_string()
    } else {
        format!(
            "not significantly slower than the fastest ({} at {} threads, {}), with fewer threads",
            best.method,
            best.threads,
            human_hours(best.hours)
        )
    };
    format!(
        "use {} ({} connections) at {} threads: {} (95 %: {} – {}), {why}",
        pick.method,
        pick.connection,
        pick.threads,
        human_hours(pick.hours),
        human_hours(pick.bounds_hours().0),
        human_hours(pick.bounds_hours().1)
    )
}

/// Share of the predicted time per size bucket for option `o`.
fn shares(corpus: &CorpusDescription, o: &OptionEstimate) -> Vec<BucketShare> {
    let c = o.per_mib_s / 1_048_576.0;
    let total: f64 = corpus
        .size_histogram
        .iter()
        .map(|b| b.files as f64 * o.per_doc_s + b.bytes as f64 * c)
        .sum();
    let mut out: Vec<BucketShare> = corpus
        .size_histogram
        .iter()
        .map(|b| BucketShare {
            lo_bytes: b.lo_bytes,
            hi_bytes: b.hi_bytes,
            documents: b.files,
            share_pct: if total > 0.0 {
                round(
                    (b.files as f64 * o.per_doc_s + b.bytes as f64 * c) * 100.0 / total,
                    1,
                )
            } else {
                0.0
            },
        })
        .collect();
    out.sort_by(|x, y| y.share_pct.total_cmp(&x.share_pct));
    out
}

/// The fastest option, where more threads stop helping, which sizes take the time.
fn findings(options: &[OptionEstimate], shares: &[BucketShare]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(best) = options.first() else {
        return vec!["no measured cells to estimate from".into()];
    };
    out.push(format!(
        "fastest: {} ({} connections) at {} threads: {} {}",
        best.method,
        best.connection,
        best.threads,
        human_hours(best.hours),
        best.spread_text()
    ));
    let mut paths: Vec<(&str, ConnectionPolicy)> = options
        .iter()
        .map(|o| (o.method.as_str(), o.connection))
        .collect();
    paths.sort();
    paths.dedup();
    for (m, conn) in paths {
        let mut by_t: Vec<&OptionEstimate> = options
            .iter()
            .filter(|o| o.method == m && o.connection == conn)
            .collect();
        by_t.sort_by_key(|o| o.threads);
        let Some(min) = by_t.iter().min_by(|x, y| x.hours.total_cmp(&y.hours)) else {
            continue;
        };
        let worse: Vec<u64> = by_t
            .iter()
            .filter(|o| o.threads > min.threads && o.bounds_hours().0 > min.bounds_hours().1)
            .map(|o| o.threads)
            .collect();
        let mut line = format!(
            "{m} ({conn}): shortest at {} threads ({} {})",
            min.threads,
            human_hours(min.hours),
            min.spread_text()
        );
        if let Some(t) = worse.first() {
            line.push_str(&format!(
                "; from {t} threads on it gets significantly slower"
            ));
        } else if by_t.last().is_some_and(|o| o.threads == min.threads) {
            line.push_str("; the most threads measured: more may still help");
        }
        out.push(line);
    }
    let top: Vec<String> = shares
        .iter()
        .take(3)
        .filter(|s| s.share_pct > 0.0)
        .map(|s| {
            format!(
                "{}–{} {:.0} %",
                human_bytes(s.lo_bytes),
                human_bytes(s.hi_bytes),
                s.share_pct
            )
        })
        .collect();
    if !top.is_empty() {
        out.push(format!(
            "where the time goes (fastest option): {}",
            top.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One file or several, the caveat reads right and names the size from which it counts.
    #[test]
    fn the_unsent_caveat_counts_in_words() {
        let u = |files| super::super::pilot::Unsent {
            files,
            share: 0.24,
            above_bytes: 64 << 20,
        };
        assert!(
            unsent_note(u(1)).starts_with("1 file, 24 % of the corpus's bytes, is larger than any the pilot sent (its largest under 64.0 MiB)"),
            "{}",
            unsent_note(u(1))
        );
        assert!(unsent_note(u(11)).starts_with("11 files, 24 % of the corpus's bytes, are larger"));
    }

    /// The ETA's prior: the documents over the duration at the import's threads (else the
    /// first option's), the spread from the interval's larger side.
    #[test]
    fn the_etas_prior_is_the_estimates_rate_at_its_threads() {
        let option = |threads: u64, d: f64, lo: f64, hi: f64| {
            serde_json::json!({"method": "direct", "connection": "reuse", "threads": threads,
                "duration_s": d, "ci95_s": (hi - lo) / 2.0, "hours": d / 3600.0,
                "ci95_hours": 0.0, "per_doc_s": 0.0, "per_mib_s": 0.0, "sizes_measured": [],
                "flags": [], "duration_lo_s": lo, "duration_hi_s": hi})
        };
        let est: Estimate = serde_json::from_value(serde_json::json!({
            "corpus": "c", "documents": 12000, "bytes": 0, "time_by_size": [], "findings": [],
            "assumptions": [], "options": [option(8, 100.0, 80.0, 150.0), option(4, 200.0, 150.0, 250.0)]
        }))
        .unwrap();
        let (rate, sd) = est.eta_prior(4).unwrap();
        assert!((rate - 60.0).abs() < 1e-9, "{rate}");
        assert!((sd - (200.0f64 / 150.0).ln() / 1.96).abs() < 1e-9, "{sd}");
        let (rate, sd) = est.eta_prior(16).unwrap();
        assert!((rate - 120.0).abs() < 1e-9 && (sd - 1.5f64.ln() / 1.96).abs() < 1e-9);
    }

    #[test]
    fn versions_and_folders_are_requests_and_bytes() {
        use crate::protocol_kind::ProtocolKind;
        let mut d = crate::corpus::Describer::new("t", "directory");
        for _ in 0..10 {
            d.document(1000, "text/plain");
        }
        for _ in 0..3 {
            d.directory();
        }
        d.versions(std::path::Path::new("x"), &[vec![1], vec![2]], 1500);
        d.shadow().version_property_updates = 2;
        let c = d.finish();
        assert_eq!(work(&c, ProtocolKind::Alfresco), (14.0, 11_500.0, 4));
        assert_eq!(work(&c, ProtocolKind::Liferay), (15.0, 11_500.0, 5));
        assert_eq!(work(&c, ProtocolKind::Cmis), (17.0, 11_500.0, 7));
    }

    #[test]
    fn least_squares_weights_recover_a_line() {
        // t = 0.01 + 2e-9·b exactly at three sizes.
        let sizes = [1e4, 3e5, 3e6];
        let t: Vec<f64> = sizes.iter().map(|b| 0.01 + 2e-9 * b).collect();
        let (al, ga) = weights(&sizes);
        let a: f64 = al.iter().zip(&t).map(|(w, t)| w * t).sum();
        let c: f64 = ga.iter().zip(&t).map(|(w, t)| w * t).sum();
        assert!(
            (a - 0.01).abs() < 1e-12 && (c - 2e-9).abs() < 1e-18,
            "{a} {c}"
        );
        let (al, ga) = weights(&[5.0]);
        assert_eq!((al, ga), (vec![1.0], vec![0.0]));
    }
}
