//! The cost of an import's work, fitted from its progress so far, for the ETA
//! (`analysis::eta`): seconds per document, per folder and per byte over the progress
//! samples, and how the recent window and the first half of the run ran against that fit
//! (a server warming, or a repository slowing as it fills). Pure; nothing here reads a clock.
//!
//! Why a fit and not a rate: a corpus import makes most of its folders in its first minutes
//! (a tree walked in order) and a folder costs a repository a request as a document does, so
//! its documents-per-second rises through the run; and its large files do not come evenly.
//! Replayed over 16 finished imports (`examples/eta_replay.rs`), an ETA from the documents'
//! rate alone was 73 % off at a tenth of the import (median), one over requests 31 %.

/// Progress counted at an instant (cumulative).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counts {
    pub docs: f64,
    pub folders: f64,
    pub bytes: f64,
}

impl Counts {
    fn minus(self, o: Counts) -> Counts {
        Counts {
            docs: self.docs - o.docs,
            folders: self.folders - o.folders,
            bytes: self.bytes - o.bytes,
        }
    }

    /// What is left of `total` after `self` (never below 0).
    pub fn left_of(self, total: Counts) -> Counts {
        Counts {
            docs: (total.docs - self.docs).max(0.0),
            folders: (total.folders - self.folders).max(0.0),
            bytes: (total.bytes - self.bytes).max(0.0),
        }
    }
}

/// The fitted cost of the work, and the run's level against it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostFit {
    /// Seconds per document, per folder and per byte over the whole run (0 where a term was
    /// left out: its total unknown, or it would have cost less than nothing).
    pub per_doc: f64,
    pub per_folder: f64,
    pub per_byte: f64,
    /// How much a document's cost rises per document held (seconds per document per
    /// document), from the middle of the run's documents (`docs_mid`); 0 when the cost did
    /// not rise (a fall, a server warming, is not carried: it ends).
    pub growth: f64,
    /// The growth's standard error (0 without one).
    pub growth_se: f64,
    pub docs_mid: f64,
    /// The recent window's seconds over what the fit says its work costs (1: as the run).
    pub level_now: f64,
    /// The work done by now, in the fit's seconds.
    pub work_done_s: f64,
}

impl CostFit {
    /// What `c` costs at the fit's (whole-run) level, seconds, its documents each at the
    /// run's middle (no growth).
    pub fn seconds(&self, c: Counts) -> f64 {
        self.per_doc * c.docs + self.per_folder * c.folders + self.per_byte * c.bytes
    }

    /// What the work `left` costs after `done` documents, with the growth carried on.
    pub fn seconds_growing(&self, done: f64, left: Counts) -> f64 {
        self.seconds_growing_by(done, left, self.growth)
    }

    /// The same, the cost reached by now staying and rising by `growth` from here on.
    pub fn seconds_growing_by(&self, done: f64, left: Counts, growth: f64) -> f64 {
        self.seconds(left)
            + self.growth * left.docs * (done - self.docs_mid)
            + growth * left.docs * left.docs / 2.0
    }
}

/// Fits the cost of `samples` (time, cumulative counts; in time order, the first at the
/// start), with a folder term when `folders` and a byte term when `bytes` (their totals
/// known), and reads the levels over the last `window_s` and the first half. None before
/// there are enough increments, or when documents come out free. A rise per document held is
/// kept when its t passes `min_t`.
pub fn fit(
    samples: &[(f64, Counts)],
    folders: bool,
    bytes: bool,
    window_s: f64,
    min_t: f64,
) -> Option<CostFit> {
    if samples.len() < 4 {
        return None;
    }
    let steps: Vec<(f64, Counts)> = samples
        .windows(2)
        .map(|w| (w[1].0 - w[0].0, w[1].1.minus(w[0].1)))
        .filter(|(dt, _)| *dt > 0.0)
        .collect();
    // Bytes in MiB: the normal equations stay well conditioned.
    const MIB: f64 = 1024.0 * 1024.0;
    // Each step's documents at how many were held at its middle, from the run's middle: the
    // growth term's column (a cost per document linear in the documents held, as a
    // repository whose every create scans or indexes what it holds).
    let mids: Vec<f64> = samples
        .windows(2)
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| (w[0].1.docs + w[1].1.docs) / 2.0)
        .collect();
    let total_docs: f64 = steps.iter().map(|(_, c)| c.docs).sum();
    let docs_mid = if total_docs > 0.0 {
        steps
            .iter()
            .zip(&mids)
            .map(|((_, c), m)| c.docs * m)
            .sum::<f64>()
            / total_docs
    } else {
        0.0
    };
    // Per 1,000 documents held: the normal equations stay well conditioned.
    let mut terms = [true, folders, bytes, true];
    let coef = loop {
        let cols: Vec<usize> = (0..4).filter(|&i| terms[i]).collect();
        let x = |c: &Counts, mid: f64, i: usize| match i {
            0 => c.docs,
            1 => c.folders,
            2 => c.bytes / MIB,
            _ => c.docs * (mid - docs_mid) / 1000.0,
        };
        let k = cols.len();
        let mut m = vec![vec![0.0; k + 1]; k];
        for ((dt, c), mid) in steps.iter().zip(&mids) {
            for (r, &i) in cols.iter().enumerate() {
                for (s, &j) in cols.iter().enumerate() {
                    m[r][s] += x(c, *mid, i) * x(c, *mid, j);
                }
                m[r][k] += x(c, *mid, i) * dt;
            }
        }
        // Terms that move together (every document the same size) cannot be told apart:
        // the bytes, then the folders, then the growth are left to the documents.
        let Some(b) = solve(m) else {
            match [2, 1, 3].into_iter().find(|&i| terms[i]) {
                Some(i) => {
                    terms[i] = false;
                    continue;
                }
                None => return None,
            }
        };
        // A term that would cost less than nothing is left out and the rest refitted (a
        // falling cost is a server warming, which ends).
        let falling = cols.iter().position(|&i| i == 3).filter(|&r| b[r] < 0.0);
        match falling.or_else(|| {
            (0..k)
                .filter(|&r| b[r] < 0.0)
                .min_by(|&p, &q| b[p].total_cmp(&b[q]))
        }) {
            Some(r) if cols[r] != 0 => terms[cols[r]] = false,
            Some(_) => return None,
            None => {
                // A growth that does not stand out is left out and the rest refitted.
                let se = if cols.contains(&3) {
                    match growth_se(&steps, &mids, &cols, &b, &x, min_t) {
                        Some(se) => se,
                        None => {
                            terms[3] = false;
                            continue;
                        }
                    }
                } else {
                    0.0
                };
                let mut coef = [0.0; 5];
                for (r, &i) in cols.iter().enumerate() {
                    coef[i] = b[r];
                }
                coef[4] = se;
                break coef;
            }
        }
    };
    let mut f = CostFit {
        per_doc: coef[0],
        per_folder: coef[1],
        per_byte: coef[2] / MIB,
        growth: coef[3] / 1000.0,
        growth_se: coef[4] / 1000.0,
        docs_mid,
        level_now: 1.0,
        work_done_s: 0.0,
    };
    if f.per_doc <= 0.0 {
        return None;
    }
    read_levels(samples, &mut f, window_s);
    Some(f)
}

/// The run's level against the fit `f` (its seconds over the fit's) over the last
/// `window_s`, and the work done by now.
fn read_levels(samples: &[(f64, Counts)], f: &mut CostFit, window_s: f64) {
    let (t0, t1) = (samples[0].0, samples[samples.len() - 1].0);
    f.work_done_s = f.seconds(samples[samples.len() - 1].1.minus(samples[0].1));
    if let Some(level) = f.level_between(samples, (t1 - window_s).max(t0), t1) {
        f.level_now = level;
    }
}

impl CostFit {
    /// The seconds the steps of `samples` between `from` and `to` took over what this fit
    /// says their work costs (1: as the fit), a step's documents at the level of those held
    /// at its middle; None when the fit says that work is free (no step in between).
    pub fn level_between(&self, samples: &[(f64, Counts)], from: f64, to: f64) -> Option<f64> {
        let (mut secs, mut work) = (0.0, 0.0);
        for w in samples.windows(2) {
            if w[0].0 >= from && w[1].0 <= to {
                let d = w[1].1.minus(w[0].1);
                secs += w[1].0 - w[0].0;
                work += self.seconds(d)
                    + self.growth * d.docs * ((w[0].1.docs + w[1].1.docs) / 2.0 - self.docs_mid);
            }
        }
        (work > 0.0).then(|| secs / work)
    }
}

/// The growth's standard error (the last of `cols`, coefficients `b`) when it stands out of
/// the steps' noise: t > 3 (neighbouring steps share a moment, so the plain standard error is
/// too small; a growth carried by mistake is extrapolated over all the work left); None when
/// it does not.
fn growth_se(
    steps: &[(f64, Counts)],
    mids: &[f64],
    cols: &[usize],
    b: &[f64],
    x: &dyn Fn(&Counts, f64, usize) -> f64,
    min_t: f64,
) -> Option<f64> {
    let k = cols.len();
    let n = steps.len();
    if n <= k + 2 {
        return None;
    }
    let mut xtx = vec![vec![0.0; k + 1]; k];
    let mut rss = 0.0;
    for ((dt, c), mid) in steps.iter().zip(mids) {
        let row: Vec<f64> = cols.iter().map(|&i| x(c, *mid, i)).collect();
        let pred: f64 = row.iter().zip(b).map(|(v, w)| v * w).sum();
        rss += (dt - pred).powi(2);
        for r in 0..k {
            for s in 0..k {
                xtx[r][s] += row[r] * row[s];
            }
        }
    }
    // (XᵀX)⁻¹'s diagonal at the growth: solve XᵀX z = e_g.
    let g = k - 1;
    for (r, row) in xtx.iter_mut().enumerate() {
        row[k] = if r == g { 1.0 } else { 0.0 };
    }
    let z = solve(xtx)?;
    let var = rss / (n - k) as f64 * z[g];
    (var > 0.0 && b[g] / var.sqrt() > min_t).then(|| var.sqrt())
}

/// Solves the augmented normal equations `m` (k rows of k + 1) by Gaussian elimination with
/// partial pivoting; None when singular.
fn solve(mut m: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let k = m.len();
    for c in 0..k {
        let p = (c..k).max_by(|&a, &b| m[a][c].abs().total_cmp(&m[b][c].abs()))?;
        if m[p][c].abs() < 1e-12 {
            return None;
        }
        m.swap(c, p);
        let pivot = m[c].clone();
        for (r, row) in m.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot[c];
                for (v, p) in row.iter_mut().zip(&pivot).skip(c) {
                    *v -= f * p;
                }
            }
        }
    }
    Some((0..k).map(|r| m[r][k] / m[r][r]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An import whose folders come first: 1 ms a document, 5 ms a folder, 2 ms a MiB.
    fn import(n: usize) -> Vec<(f64, Counts)> {
        let (mut t, mut c) = (0.0, Counts::default());
        let mut out = vec![(0.0, c)];
        for i in 0..n {
            let folders = if i < n / 4 { 3.0 } else { 0.0 };
            let docs = 10.0;
            let bytes = if i % 7 == 0 { 4.0 } else { 0.5 } * 1024.0 * 1024.0;
            t += 0.001 * docs + 0.005 * folders + 0.002 * bytes / 1048576.0;
            c = Counts {
                docs: c.docs + docs,
                folders: c.folders + folders,
                bytes: c.bytes + bytes,
            };
            out.push((t, c));
        }
        out
    }

    #[test]
    fn a_known_cost_is_recovered_and_the_level_is_one() {
        let f = fit(&import(200), true, true, 0.5, 3.0).unwrap();
        assert!((f.per_doc - 0.001).abs() < 1e-9, "{f:?}");
        assert!((f.per_folder - 0.005).abs() < 1e-9, "{f:?}");
        assert!((f.per_byte * 1048576.0 - 0.002).abs() < 1e-9, "{f:?}");
        assert!((f.level_now - 1.0).abs() < 1e-9);
    }

    #[test]
    fn without_folder_counts_the_documents_carry_the_cost() {
        let f = fit(&import(200), false, false, 0.5, 3.0).unwrap();
        assert_eq!((f.per_folder, f.per_byte), (0.0, 0.0));
        assert!(f.per_doc > 0.001, "{f:?}");
    }
}
