//! The sweep plan: access methods × connection policies × size classes × thread counts ×
//! runs, expanded and ordered (interleaved or shuffled with the seed) in one place.

use std::path::Path;

use anyhow::{Result, bail};

use super::CommonPlan;
use crate::access::{self, AccessMethod, ConnectionPolicy};
use crate::cli::{Order, SweepArgs};
use crate::fixtures::SizeClass;
use crate::report::sweep::CellKey;

/// Parses `1-10,15,20` into sorted, distinct thread counts (each 1..=10000).
pub fn parse_threads(s: &str) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = |t: &str| -> Result<u64> {
            match t.trim().parse::<u64>() {
                Ok(n) if (1..=10_000).contains(&n) => Ok(n),
                _ => bail!(
                    "--threads `{s}`: `{t}` is not a thread count from 1 to 10000 (use e.g. 1-10,15,20)"
                ),
            }
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    bail!("--threads `{s}`: range `{part}` runs backwards");
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    if out.is_empty() {
        bail!("--threads is empty (use e.g. 1-10,15,20)");
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[derive(Debug, Clone)]
pub struct SweepPlanSpec {
    pub common: CommonPlan,
    pub methods: Vec<AccessMethod>,
    /// Methods that were listed by default but did not answer (name, reason).
    pub unreachable: Vec<(String, String)>,
    /// Empty = each method's own connection policy.
    pub connections: Vec<ConnectionPolicy>,
    pub sizes: Vec<SizeClass>,
    pub threads: Vec<u64>,
    pub docs: u64,
    pub runs: u32,
    pub order: Order,
    pub baseline: String,
}

impl SweepPlanSpec {
    /// Resolves the methods (checking reachability of the default set) and the axes.
    pub async fn build(a: &SweepArgs) -> Result<SweepPlanSpec> {
        let common = CommonPlan::try_from(&a.common)?;
        let threads = parse_threads(&a.threads)?;
        let mut sizes = a.sizes.clone();
        sizes.dedup();
        let timeout = std::time::Duration::from_secs(2);
        let mut methods = Vec::new();
        let mut unreachable = Vec::new();
        if a.access_methods.is_empty() {
            for m in access::list(&a.access_methods_dir)? {
                match access::reachable(&m, timeout).await {
                    Ok(()) => methods.push(m),
                    Err(why) => unreachable.push((m.name.clone(), why)),
                }
            }
            if methods.is_empty() {
                bail!(
                    "--access-methods: none of the methods in {} answers; start the lab (scripts/lab.sh up) or name methods, e.g. --access-methods embedded-http",
                    a.access_methods_dir.display()
                );
            }
        } else {
            for spec in &a.access_methods {
                let m = access::resolve(spec, &a.access_methods_dir)?;
                if let Err(why) = access::reachable(&m, timeout).await {
                    bail!(
                        "--access-methods: `{}` does not answer ({why}); check its url in {}",
                        m.name,
                        m.source.display()
                    );
                }
                if methods.iter().any(|x: &AccessMethod| x.name == m.name) {
                    bail!("--access-methods: `{}` is listed twice", m.name);
                }
                methods.push(m);
            }
        }
        for m in &methods {
            if m.is_embedded() && common.protocol == crate::protocol::ProtocolKind::Cmis {
                bail!(
                    "access method {}: the embedded target does not speak CMIS; use a method pointing at a CMIS repository (scripts/cmis.sh up)",
                    m.name
                );
            }
            if let Some(p) = m.protocol
                && p != common.protocol
            {
                bail!(
                    "access method {} ({}) is for {}, but the sweep speaks {}; pass --protocol {} or choose other methods",
                    m.name,
                    m.source.display(),
                    p.name(),
                    common.protocol.name(),
                    p.name()
                );
            }
        }
        let baseline = match &a.baseline {
            Some(b) if methods.iter().any(|m| &m.name == b) => b.clone(),
            Some(b) => bail!(
                "--baseline {b}: not one of the swept methods ({})",
                methods
                    .iter()
                    .map(|m| m.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None if methods.iter().any(|m| m.name == "direct") => "direct".to_string(),
            None => methods[0].name.clone(),
        };
        let mut connections = a.connection.clone();
        connections.dedup();
        Ok(SweepPlanSpec {
            common,
            methods,
            unreachable,
            connections,
            sizes,
            threads,
            docs: a.docs,
            runs: a.runs,
            order: a.order,
            baseline,
        })
    }

    /// Connection policies a method runs with.
    pub fn connections_of(&self, m: &AccessMethod) -> Vec<ConnectionPolicy> {
        if self.connections.is_empty() {
            vec![m.connection]
        } else {
            self.connections.clone()
        }
    }

    /// Every cell, in report order.
    pub fn cells(&self) -> Vec<CellKey> {
        let mut out = Vec::new();
        for m in &self.methods {
            for c in self.connections_of(m) {
                for s in &self.sizes {
                    for &t in &self.threads {
                        out.push(CellKey {
                            method: m.name.clone(),
                            connection: c.name().into(),
                            size: s.name().into(),
                            threads: t,
                        });
                    }
                }
            }
        }
        out
    }
}

/// The order runs are done in: `(cell, run)` pairs.
pub fn schedule(cells: &[CellKey], runs: u32, order: Order, seed: u64) -> Vec<(CellKey, u32)> {
    let mut out = Vec::with_capacity(cells.len() * runs as usize);
    for r in 1..=runs {
        for c in cells {
            out.push((c.clone(), r));
        }
    }
    if order == Order::Random {
        let mut rng = crate::fixtures::Rng::new(seed ^ 0x5EED_0F5E_ED00);
        for i in (1..out.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            out.swap(i, j);
        }
    }
    out
}

/// Is `dir` a sweep results directory?
pub fn is_sweep_dir(dir: &Path) -> bool {
    dir.join("plan.json").is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_lists() {
        assert_eq!(
            parse_threads("1-10,15,20,30,50,70,90,100").unwrap().len(),
            17
        );
        assert_eq!(parse_threads("4,1,2-3,2").unwrap(), vec![1, 2, 3, 4]);
        for bad in ["0", "a", "5-2", "", "1-20000"] {
            assert!(
                format!("{:#}", parse_threads(bad).unwrap_err()).contains("--threads"),
                "{bad}"
            );
        }
    }

    #[test]
    fn interleaved_and_random_orders_cover_every_run_once() {
        let cells: Vec<CellKey> = (1..=3)
            .map(|t| CellKey {
                method: "m".into(),
                connection: "reuse".into(),
                size: "small".into(),
                threads: t,
            })
            .collect();
        let s = schedule(&cells, 2, Order::Interleaved, 1);
        assert_eq!(
            s.iter().map(|(c, r)| (c.threads, *r)).collect::<Vec<_>>(),
            vec![(1, 1), (2, 1), (3, 1), (1, 2), (2, 2), (3, 2)]
        );
        let mut r = schedule(&cells, 2, Order::Random, 1);
        assert_eq!(
            r,
            schedule(&cells, 2, Order::Random, 1),
            "deterministic from the seed"
        );
        r.sort_by_key(|(c, run)| (*run, c.threads));
        assert_eq!(r, s);
    }
}
