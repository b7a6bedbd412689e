//! What a paced (open-model, `--rate`) run records beside a closed-loop run's fields: the
//! asked and achieved rates, the response time counted from when each document was due
//! (the run's `latency_ms` stays the service time, from send), late documents and the
//! backlog. The schedule and its timing rules are `engine::pace`; this is only the record.

use serde::{Deserialize, Serialize};

use crate::metrics::LatencyMs;

/// A paced run's schedule and what became of it (`RunRecord::paced`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PacedRecord {
    /// The asked arrival rate, documents per second (`--rate`).
    pub rate_per_s: f64,
    /// Documents acknowledged per second of the run (its `docs_per_sec`): what the target
    /// actually took. Below `rate_per_s` when it did not keep up.
    pub achieved_per_s: f64,
    /// Documents the schedule made due in the run (count mode: all of them; `--duration`:
    /// those due inside the window).
    pub due: u64,
    /// Seconds from the start to the last due time.
    pub schedule_s: f64,
    /// Documents started more than `late_after_ms` after they were due.
    pub late: u64,
    /// The lateness tolerance: one interval (1 / rate) or 10 ms, whichever is larger.
    pub late_after_ms: f64,
    /// Documents due but not started when the last due time (plus the tolerance) passed:
    /// the queue the target left behind.
    pub backlog: u64,
    /// False when the target did not keep up with the rate: a backlog, or more than 1 % of
    /// the due documents late.
    pub kept_up: bool,
    /// Response time of acknowledged documents, from when each was due to the end of its
    /// response (coordinated omission corrected, as wrk2 reports it), ms.
    pub response_ms: LatencyMs,
    /// The response-time histogram (µs, HdrHistogram V2 + base64), so runs merge exactly.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub response_histogram_us: String,
}

impl PacedRecord {
    /// The runs of one cell as one record: counts added, response times merged exactly from
    /// their histograms, the achieved rate given (the cell's docs/sec); `None` for a cell
    /// of closed-loop runs.
    pub fn over_runs<'a>(
        runs: impl Iterator<Item = &'a PacedRecord>,
        achieved_per_s: f64,
    ) -> Option<PacedRecord> {
        let (mut a, n) = Self::fold(runs, |a, r| a.schedule_s += r.schedule_s)?;
        a.schedule_s = crate::metrics::round3(a.schedule_s / n as f64);
        a.achieved_per_s = achieved_per_s;
        Some(a)
    }

    /// The shards of one run (`merge`) as the one schedule of the whole rate: their rates,
    /// documents due, late and in the backlog added, their response times merged exactly;
    /// it kept up where every shard did; `achieved_per_s` is the merged run's docs/sec.
    pub fn over_shards<'a>(
        shards: impl Iterator<Item = &'a PacedRecord>,
        achieved_per_s: f64,
    ) -> Option<PacedRecord> {
        let (mut a, _) = Self::fold(shards, |a, r| {
            a.rate_per_s += r.rate_per_s;
            a.schedule_s = a.schedule_s.max(r.schedule_s);
            a.late_after_ms = a.late_after_ms.min(r.late_after_ms);
        })?;
        a.rate_per_s = crate::metrics::round3(a.rate_per_s);
        a.achieved_per_s = achieved_per_s;
        Some(a)
    }

    /// What both merges share: documents due, late and in the backlog added, kept up where
    /// every record did, response times merged exactly; `more` adds what differs. Returns the
    /// merged record and how many records it holds.
    fn fold<'a>(
        records: impl Iterator<Item = &'a PacedRecord>,
        more: impl Fn(&mut PacedRecord, &PacedRecord),
    ) -> Option<(PacedRecord, usize)> {
        let mut acc: Option<PacedRecord> = None;
        let mut hist: Option<hdrhistogram::Histogram<u64>> = None;
        let mut n = 0;
        for r in records {
            n += 1;
            if let Ok(h) = crate::metrics::decode_hist(&r.response_histogram_us) {
                match &mut hist {
                    Some(a) => a.add(&h).expect("same bounds"),
                    None => hist = Some(h),
                }
            }
            match &mut acc {
                None => acc = Some(r.clone()),
                Some(a) => {
                    a.due += r.due;
                    a.late += r.late;
                    a.backlog += r.backlog;
                    a.kept_up &= r.kept_up;
                    more(a, r);
                }
            }
        }
        let mut a = acc?;
        if let Some(h) = &hist {
            a.response_ms = LatencyMs::from_hist(h);
            a.response_histogram_us = crate::metrics::encode_hist(h);
        }
        Some((a, n))
    }

    /// One line for the human summary.
    pub fn text(&self) -> String {
        let verdict = if self.kept_up {
            "kept up".to_string()
        } else {
            format!(
                "DID NOT KEEP UP: achieved {:.1} docs/s of {:.1} asked, backlog {} documents, {} late",
                self.achieved_per_s, self.rate_per_s, self.backlog, self.late
            )
        };
        format!(
            "paced at {:.1} docs/s: achieved {:.1}, {} due over {:.3} s, {} late (> {:.0} ms), backlog {}; response ms (from due) p50 {:.2} p95 {:.2} p99 {:.2} max {:.2}; {verdict}",
            self.rate_per_s,
            self.achieved_per_s,
            self.due,
            self.schedule_s,
            self.late,
            self.late_after_ms,
            self.backlog,
            self.response_ms.p50,
            self.response_ms.p95,
            self.response_ms.p99,
            self.response_ms.max,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_into_one_record_exactly() {
        let one = |ms: &[u64], late, backlog, kept_up| {
            let mut h =
                hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
            for m in ms {
                h.record(m * 1000).unwrap();
            }
            PacedRecord {
                rate_per_s: 50.0,
                achieved_per_s: 0.0,
                due: ms.len() as u64,
                schedule_s: 1.0,
                late,
                late_after_ms: 20.0,
                backlog,
                kept_up,
                response_ms: LatencyMs::from_hist(&h),
                response_histogram_us: crate::metrics::encode_hist(&h),
            }
        };
        let a = one(&[10, 20, 30], 0, 0, true);
        let b = one(&[40, 1000], 2, 1, false);
        let m = PacedRecord::over_runs([&a, &b].into_iter(), 48.5).unwrap();
        assert_eq!((m.due, m.late, m.backlog, m.kept_up), (5, 2, 1, false));
        assert_eq!(m.achieved_per_s, 48.5);
        assert!(
            (m.response_ms.max - 1000.0).abs() < 1.0,
            "{:?}",
            m.response_ms
        );
        assert!((m.response_ms.min - 10.0).abs() < 0.1);
        assert!(PacedRecord::over_runs(std::iter::empty(), 1.0).is_none());
    }
}
