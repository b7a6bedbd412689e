//! The answers a sweep's report opens with (report.md, report.html and the terminal): what
//! each access method costs against the baseline per size class, at the fewest and the most
//! threads, with its interval; where scaling stops; what limited the fastest cell of each
//! size; and what stayed unanswered. A few sentences, each read off the summary's numbers
//! (no statistics of their own: the verdicts are the relative-cost table's); the details
//! follow, grouped by question (`findings`).

use std::fmt::Write;

use crate::analysis::limits::Verdict;
use crate::analysis::summary::{Relative, SweepSummary};
use crate::fixtures::SizeClass;
use crate::transport::ConnectionPolicy;

/// One answer: the question in a few words, and the answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub question: String,
    pub answer: String,
}

fn threads(t: u64) -> String {
    if t == 1 {
        "1 thread".into()
    } else {
        format!("{t} threads")
    }
}

/// How one comparison reads, in a few words (its verdict and interval, as the table has it).
fn phrase(r: &Relative) -> String {
    let (d, h) = (r.diff_pct, r.ci95_pct);
    match r.verdict {
        Verdict::Slower => format!("{:.1} % ± {h:.1} % slower", d.abs()),
        Verdict::Faster => format!("{:.1} % ± {h:.1} % faster", d.abs()),
        Verdict::NoDifference => format!("no significant difference ({d:+.1} % ± {h:.1} %)"),
        Verdict::TooNoisy => format!("unresolved ({d:+.1} % ± {h:.1} %)"),
    }
}

/// What a terminal shows after a sweep (and a merge): the answers, then the findings
/// grouped by question, each line ready to print.
pub fn terminal(s: &SweepSummary) -> Vec<String> {
    let mut out = vec!["Answers".to_string()];
    out.extend(
        answers(s)
            .into_iter()
            .map(|a| format!("  {}: {}", a.question, a.answer)),
    );
    for (question, lines) in super::findings::grouped(s) {
        out.push(question.to_string());
        out.extend(lines.into_iter().map(|f| format!("  {f}")));
    }
    out
}

/// The answers, in the order a reader asks them.
pub fn answers(s: &SweepSummary) -> Vec<Answer> {
    let mut out = costs(s);
    out.extend(reader_slo(s));
    match s.plan.measure.rate_per_s {
        // A paced sweep's docs/sec is the asked rate wherever the target kept up: where
        // scaling stops and the fastest cell say nothing there; whether it kept up does.
        Some(rate) => out.extend(paced(s, Some(rate))),
        None if !s.plan.rates.is_empty() => out.extend(paced(s, None)),
        None => {
            out.extend(scaling(s));
            out.extend(fastest(s));
            out.extend(what_would_help(s));
        }
    }
    out.extend(window(s));
    out.push(unresolved(s));
    out
}

/// `estimate --window`: whether the import finishes inside the team's window, and what it
/// takes where it does not (`analysis::window` words it).
fn window(s: &SweepSummary) -> Option<Answer> {
    let w = s.estimate.as_ref()?.window.as_ref()?;
    Some(Answer {
        question: format!("Does the import finish inside {}", w.window),
        answer: w.answer.clone(),
    })
}

/// `--rates` with `--readers`: the highest import rate whose readers' p99 stays under
/// `--reader-slo`, per method, size and threads (`analysis::slo` words it).
fn reader_slo(s: &SweepSummary) -> Vec<Answer> {
    s.slo
        .iter()
        .map(|a| Answer {
            question: format!(
                "How fast {} can import {} documents at {} with readers' p99 under {} ms",
                a.method,
                a.size,
                threads(a.threads),
                a.slo_ms
            ),
            answer: a.text.clone(),
        })
        .collect()
}

/// `--rate`: whether each cell kept up with the rate, its achieved rate and response time
/// (from due), or its backlog and late documents.
fn paced(s: &SweepSummary, rate: Option<f64>) -> Vec<Answer> {
    let parts: Vec<String> = s
        .cells
        .iter()
        .filter_map(|c| {
            let p = c.paced.as_ref()?;
            let mut head = format!("{} {} at {}", c.method, c.size, threads(c.threads));
            if let Some(r) = c.rate_per_s {
                head.push_str(&format!(", {r} docs/s"));
            }
            Some(if p.kept_up {
                format!(
                    "{head}: kept up ({:.1} docs/s; response p99 {:.1} ms from due, service p99 {:.1} ms)",
                    p.achieved_per_s, p.response_ms.p99, c.latency_ms.p99
                )
            } else {
                format!(
                    "{head}: did NOT keep up: achieved {:.1} docs/s, backlog {} and {} late of {} due (response p99 {:.1} ms from due)",
                    p.achieved_per_s, p.backlog, p.late, p.due, p.response_ms.p99
                )
            })
        })
        .collect();
    if parts.is_empty() {
        return Vec::new();
    }
    vec![Answer {
        question: match rate {
            Some(rate) => format!("Whether the target kept up with {rate} docs/s"),
            None => "Whether the target kept up with each rate".to_string(),
        },
        answer: parts.join("; "),
    }]
}

/// Per method against the baseline: every size, at the fewest and the most threads.
fn costs(s: &SweepSummary) -> Vec<Answer> {
    let mut groups: Vec<(String, ConnectionPolicy)> = Vec::new();
    for r in &s.relative {
        if !groups.contains(&(r.method.clone(), r.connection)) {
            groups.push((r.method.clone(), r.connection));
        }
    }
    let several_policies = s.plan.connections.len() > 1;
    groups
        .into_iter()
        .map(|(method, conn)| {
            let mut answer = String::new();
            for (size, _) in &s.plan.sizes {
                let rows: Vec<&Relative> = s
                    .relative
                    .iter()
                    .filter(|r| r.method == method && r.connection == conn && r.size == *size)
                    .collect();
                let (Some(lo), Some(hi)) = (
                    rows.iter().min_by_key(|r| r.threads),
                    rows.iter().max_by_key(|r| r.threads),
                ) else {
                    continue;
                };
                if !answer.is_empty() {
                    answer.push_str("; ");
                }
                let _ = write!(answer, "{size}: {} at {}", phrase(lo), threads(lo.threads));
                if hi.threads != lo.threads {
                    let _ = write!(answer, ", {} at {}", phrase(hi), threads(hi.threads));
                }
            }
            let policy = if several_policies {
                format!(" ({conn} connections)")
            } else {
                String::new()
            };
            Answer {
                question: format!("What {method}{policy} costs against {}", s.plan.baseline),
                answer,
            }
        })
        .collect()
}

/// Per method: where each size's docs/sec stops growing with threads.
fn scaling(s: &SweepSummary) -> Vec<Answer> {
    if s.plan.threads.len() < 3 {
        return vec![Answer {
            question: "Where scaling stops".into(),
            answer: format!(
                "not measured: {} thread count{} (give --threads 1,2,4,8,16 or more to see the knee)",
                s.plan.threads.len(),
                if s.plan.threads.len() == 1 { "" } else { "s" }
            ),
        }];
    }
    let mut groups: Vec<(String, ConnectionPolicy)> = Vec::new();
    for r in &s.scaling {
        if !groups.contains(&(r.method.clone(), r.connection)) {
            groups.push((r.method.clone(), r.connection));
        }
    }
    let max_threads = s.plan.threads.iter().copied().max().unwrap_or(0);
    groups
        .into_iter()
        .map(|(method, conn)| {
            let parts: Vec<String> = s
                .scaling
                .iter()
                .filter(|r| r.method == method && r.connection == conn)
                .map(|r| {
                    let sc = &r.scaling;
                    let mut p = format!(
                        "{}: 90 % of its peak from {} (peak {:.0} docs/s at {}",
                        r.size,
                        threads(sc.knee_threads),
                        sc.peak_docs_per_sec,
                        sc.peak_threads
                    );
                    if let Some(t) = sc.degrades_after_threads {
                        let _ = write!(p, ", worse beyond {t}");
                    } else if sc.peak_threads == max_threads {
                        p.push_str(", the most measured");
                    }
                    p.push(')');
                    if r.unreliable.is_some() {
                        p.push_str(" (uncertain: noisy points, see below)");
                    }
                    p
                })
                .collect();
            Answer {
                question: format!("Where scaling stops, {method} ({conn} connections)"),
                answer: parts.join("; "),
            }
        })
        .collect()
}

/// Per size: the fastest cell and what limited it.
fn fastest(s: &SweepSummary) -> Vec<Answer> {
    let sizes: Vec<SizeClass> = s.plan.sizes.iter().map(|(z, _)| *z).collect();
    let parts: Vec<String> = sizes
        .iter()
        .filter_map(|size| {
            let c = s
                .cells
                .iter()
                .filter(|c| c.size == *size)
                .max_by(|a, b| a.docs_per_sec.total_cmp(&b.docs_per_sec))?;
            let limit = c.bottleneck.as_ref().map_or(
                "what limited it is unknown (no CPU readings)".to_string(),
                |b| format!("limited by {}", b.text),
            );
            Some(format!(
                "{size}: {:.0} docs/s, {} at {}, {limit}",
                c.docs_per_sec,
                c.method,
                threads(c.threads)
            ))
        })
        .collect();
    if parts.is_empty() {
        return Vec::new();
    }
    vec![Answer {
        question: "The fastest cell of each size, and what limited it".into(),
        answer: parts.join("; "),
    }]
}

/// Per size, for the fastest cell: what each change would buy (`analysis::verdict`'s
/// what-ifs) and a Little's-law gap, when there is one.
fn what_would_help(s: &SweepSummary) -> Vec<Answer> {
    let mut parts = Vec::new();
    for (size, _) in &s.plan.sizes {
        let Some(c) = s
            .cells
            .iter()
            .filter(|c| c.size == *size)
            .max_by(|a, b| a.docs_per_sec.total_cmp(&b.docs_per_sec))
        else {
            continue;
        };
        let Some(v) = &c.verdict else { continue };
        let mut p: Vec<String> = v.what_if.iter().map(|w| w.text.clone()).collect();
        if let Some(l) = v.little.as_ref().filter(|l| l.outside_pct > 15.0) {
            p.push(l.text.clone());
        }
        if !p.is_empty() {
            parts.push(format!(
                "{size} ({}, {}): {}",
                c.method,
                threads(c.threads),
                p.join("; ")
            ));
        }
    }
    if parts.is_empty() {
        return Vec::new();
    }
    vec![Answer {
        question: "What would make it faster (from the measured demands)".into(),
        answer: parts.join(". "),
    }]
}

/// The comparisons the runs could not answer, and what would.
fn unresolved(s: &SweepSummary) -> Answer {
    let open: Vec<&Relative> = s
        .relative
        .iter()
        .filter(|r| r.verdict == Verdict::TooNoisy)
        .collect();
    let answer = if s.relative.is_empty() {
        "nothing compared (one access method)".to_string()
    } else if open.is_empty() {
        format!(
            "nothing: all {} comparisons with {} are answered",
            s.relative.len(),
            s.plan.baseline
        )
    } else {
        let names: Vec<String> = open
            .iter()
            .map(|r| format!("{} {} at {}", r.method, r.size, threads(r.threads)))
            .collect();
        let more = if s.plan.measure.budget_s.is_some() {
            "a longer --budget"
        } else {
            "--budget (or more --runs)"
        };
        format!(
            "{} of {} comparisons are too noisy to tell ({}): the runs scatter more than the difference; {more} would resolve them",
            open.len(),
            s.relative.len(),
            names.join(", ")
        )
    };
    Answer {
        question: "Unresolved".into(),
        answer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A paced sweep answers whether each cell kept up, not which was fastest.
    #[test]
    fn a_paced_sweep_says_which_cells_kept_up() {
        let mut s = crate::report::testdata::fixed_summary();
        s.plan.measure.rate_per_s = Some(100.0);
        let rec = |kept_up: bool, backlog: u64| crate::results::paced::PacedRecord {
            rate_per_s: 100.0,
            achieved_per_s: if kept_up { 99.5 } else { 61.0 },
            due: 300,
            schedule_s: 2.99,
            late: if kept_up { 0 } else { 200 },
            late_after_ms: 10.0,
            backlog,
            kept_up,
            response_ms: Default::default(),
            response_histogram_us: String::new(),
        };
        for (i, c) in s.cells.iter_mut().enumerate() {
            c.paced = Some(if i == 0 {
                rec(false, 120)
            } else {
                rec(true, 0)
            });
        }
        let a = answers(&s);
        let kept = a
            .iter()
            .find(|x| x.question == "Whether the target kept up with 100 docs/s")
            .expect("a paced answer");
        let c0 = &s.cells[0];
        assert!(
            kept.answer.contains(&format!(
                "{} {} at {}: did NOT keep up: achieved 61.0 docs/s, backlog 120 and 200 late of 300 due",
                c0.method,
                c0.size,
                threads(c0.threads)
            )),
            "{}",
            kept.answer
        );
        assert!(kept.answer.contains(": kept up (99.5 docs/s"));
        assert!(
            a.iter()
                .all(|x| !x.question.starts_with("The fastest cell"))
        );
    }

    /// Every sentence is the summary's numbers: the relative costs with their intervals and
    /// verdicts, the knee and peak, the fastest cell and its limit, what stayed open.
    #[test]
    fn the_answers_say_what_the_summary_says() {
        let mut s = crate::report::testdata::fixed_summary();
        let a = answers(&s);
        let cost = &a[0];
        assert_eq!(cost.question, "What https-lb costs against direct");
        for r in &s.relative {
            let lo = s.relative.iter().map(|r| r.threads).min().unwrap();
            let hi = s.relative.iter().map(|r| r.threads).max().unwrap();
            if r.threads == lo || r.threads == hi {
                assert!(
                    cost.answer.contains(&phrase(r)),
                    "{} lacks {}",
                    cost.answer,
                    phrase(r)
                );
            }
        }
        let scale = a
            .iter()
            .find(|x| x.question.starts_with("Where scaling stops, direct"))
            .unwrap();
        let row = s.scaling.iter().find(|r| r.method == "direct").unwrap();
        assert!(scale.answer.contains(&format!(
            "peak {:.0} docs/s at {}",
            row.scaling.peak_docs_per_sec, row.scaling.peak_threads
        )));
        assert!(
            scale
                .answer
                .contains(&format!("from {}", threads(row.scaling.knee_threads)))
        );
        let best = s
            .cells
            .iter()
            .max_by(|a, b| a.docs_per_sec.total_cmp(&b.docs_per_sec))
            .unwrap();
        let fast = a
            .iter()
            .find(|x| x.question.starts_with("The fastest"))
            .unwrap();
        assert!(
            fast.answer
                .contains(&format!("{:.0} docs/s, {}", best.docs_per_sec, best.method))
        );
        let open = a.last().unwrap();
        assert_eq!(open.question, "Unresolved");
        let noisy = s
            .relative
            .iter()
            .filter(|r| r.verdict == Verdict::TooNoisy)
            .count();
        if noisy == 0 {
            assert!(open.answer.starts_with("nothing: all"), "{}", open.answer);
        }
        // One comparison made noisy: named, counted, and the remedy given.
        s.relative[0].verdict = Verdict::TooNoisy;
        let open = answers(&s).pop().unwrap();
        assert!(
            open.answer.starts_with(&format!(
                "{} of {} comparisons",
                noisy + 1,
                s.relative.len()
            )),
            "{}",
            open.answer
        );
        assert!(open.answer.contains("--budget"), "{}", open.answer);
        assert!(answers(&s)[0].answer.contains("unresolved ("));
    }
}
