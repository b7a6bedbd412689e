//! The answers a sweep's report opens with (report.md, report.html and the terminal): what
//! each access method costs against the baseline per size class, at the fewest and the most
//! threads, with its interval; where scaling stops; what limited the fastest cell of each
//! size; and what stayed unanswered. A few sentences, each read off the summary's numbers
//! (no statistics of their own: the verdicts are the relative-cost table's); the details
//! follow, grouped by question (`findings`).

use std::fmt::Write;

use super::sweep::{Relative, SweepSummary};
use crate::analysis::limits::Verdict;
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
    out.extend(scaling(s));
    out.extend(fastest(s));
    out.push(unresolved(s));
    out
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
