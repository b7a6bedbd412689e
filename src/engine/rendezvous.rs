//! A common start for the shards of one plan on several machines: shard 0 listens on the
//! rendezvous address, the others connect to it; before every run each shard says it is
//! ready, and when all are, shard 0 names a start time a little ahead (wall clock, assumed
//! NTP-synchronised) and every shard starts then. Run r+1 starts on no shard before every
//! shard has finished run r, because "ready for r+1" is only sent after r. Each `ready`
//! names the step (the sweep's cell, or `run`), so shards whose plans went apart (a method
//! one of them could not reach) stop with a clear error instead of measuring different
//! cells at once. Every wait is bounded and a timeout names the shards that did not come.
//! Line protocol over TCP: `hello <plan-id> <shard>`, `ready <run> <step>`,
//! `go <run> <unix-ms>`.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};

/// How far ahead of "all ready" the start is set, so the `go` reaches every shard in time.
const LEAD: Duration = Duration::from_millis(100);

type Lines = tokio::io::Lines<BufReader<OwnedReadHalf>>;

/// This shard's place in the rendezvous.
pub struct Rendezvous {
    shard: u64,
    shards: u64,
    timeout: Duration,
    /// Shard 0: a connection per other shard, by shard index.
    members: Vec<(u64, Lines, OwnedWriteHalf)>,
    /// Other shards: the connection to shard 0.
    coordinator: Option<(Lines, OwnedWriteHalf)>,
}

impl std::fmt::Debug for Rendezvous {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Rendezvous(shard {} of {})", self.shard, self.shards)
    }
}

/// What one barrier came to.
#[derive(Debug, Clone, Copy)]
pub struct Start {
    /// The agreed start, ms since the Unix epoch.
    pub go_unix_ms: i64,
    /// When this shard actually started, by its own clock.
    pub started_unix_ms: i64,
}

fn now_ms() -> i64 {
    crate::timefmt::now_ms()
}

async fn line(lines: &mut Lines, timeout: Duration, what: &str) -> Result<String> {
    match tokio::time::timeout(timeout, lines.next_line()).await {
        Err(_) => bail!("{what}: no answer within {} s", timeout.as_secs()),
        Ok(Err(e)) => bail!("{what}: {e}"),
        Ok(Ok(None)) => bail!("{what}: the connection closed (did that shard stop?)"),
        Ok(Ok(Some(l))) => Ok(l),
    }
}

/// How often a shard that waits says why.
const SAY_EVERY: Duration = Duration::from_secs(5);
/// How long a rendezvous name may not resolve before that is an error: long enough for a
/// cluster's DNS to publish shard 0's pod, short of the whole timeout. A name only SSH
/// knows (a `Host` alias in `~/.ssh/config`) never resolves.
const RESOLVE_GRACE: Duration = Duration::from_secs(60);

/// A shard other than 0 connects to shard 0 at `addr`, retrying until `timeout`; why it
/// cannot yet is said at once and every few seconds (on stderr, also under `--quiet`: a
/// stall must be seen), and a name that still does not resolve after a grace is an error.
async fn connect(addr: &str, shard: u64, shards: u64, timeout: Duration) -> Result<TcpStream> {
    let Some((host, _)) = addr
        .rsplit_once(':')
        .filter(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok())
    else {
        bail!("--rendezvous {addr}: give HOST:PORT (shard 0's address and port)");
    };
    let start = tokio::time::Instant::now();
    let deadline = start + timeout;
    let grace = start + timeout.min(RESOLVE_GRACE);
    let mut said: Option<tokio::time::Instant> = None;
    loop {
        let why = match tokio::net::lookup_host(addr).await {
            Err(e) => {
                if tokio::time::Instant::now() >= grace {
                    bail!(
                        "--rendezvous {addr}: the name {host} does not resolve on shard {shard} ({e}); give shard 0's address or a DNS name every shard resolves (an SSH Host alias is known to SSH only)"
                    );
                }
                format!("cannot resolve {host} ({e}); an SSH Host alias is known to SSH only")
            }
            Ok(addrs) => {
                let mut last = String::from("no address");
                let mut found = None;
                for a in addrs {
                    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                    let each = left.clamp(Duration::from_millis(100), Duration::from_secs(3));
                    match tokio::time::timeout(each, TcpStream::connect(a)).await {
                        Ok(Ok(s)) => {
                            found = Some(s);
                            break;
                        }
                        Ok(Err(e)) => last = format!("{a}: {e}"),
                        Err(_) => last = format!("{a}: no answer within {} ms", each.as_millis()),
                    }
                }
                match found {
                    Some(s) => return Ok(s),
                    None => format!("shard 0 not reachable ({last})"),
                }
            }
        };
        let now = tokio::time::Instant::now();
        if now >= deadline {
            bail!(
                "--rendezvous {addr}: {why}, for {} s (is shard 0 started, with the same --plan-id, and its port open to this shard?)",
                timeout.as_secs()
            );
        }
        if said.is_none_or(|t| now - t >= SAY_EVERY) {
            said = Some(now);
            eprintln!(
                "ingestbench: shard {shard}/{shards}: rendezvous {addr}: {why}; retrying ({} s left)",
                deadline.saturating_duration_since(now).as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Shard 0 listens on `addr`; when its name is not (yet) this machine's address (a
/// Kubernetes pod's own DNS name before it is published), on that port of every address.
async fn listen(addr: &str) -> Result<TcpListener> {
    match TcpListener::bind(addr).await {
        Ok(l) => Ok(l),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            bail!("--rendezvous {addr}: the port is in use on shard 0's machine")
        }
        Err(e) => {
            let port = addr
                .rsplit_once(':')
                .and_then(|(_, p)| p.parse::<u16>().ok())
                .with_context(|| format!("--rendezvous {addr}: give HOST:PORT"))?;
            TcpListener::bind(("0.0.0.0", port)).await.with_context(|| {
                format!("--rendezvous {addr}: shard 0 cannot listen there ({e}) nor on port {port}")
            })
        }
    }
}

impl Rendezvous {
    /// Joins the rendezvous at `addr` as `shard` of `shards` of plan `plan_id`: shard 0 waits
    /// for all others to connect; the others connect (retrying until `timeout`).
    pub async fn join(
        addr: &str,
        plan_id: &str,
        shard: u64,
        shards: u64,
        timeout: Duration,
    ) -> Result<Rendezvous> {
        let mut r = Rendezvous {
            shard,
            shards,
            timeout,
            members: Vec::new(),
            coordinator: None,
        };
        if shard == 0 {
            let l = listen(addr).await?;
            let deadline = tokio::time::Instant::now() + timeout;
            let mut said = tokio::time::Instant::now();
            while (r.members.len() as u64) < shards - 1 {
                // Waiting is normal while the others start; said every so often, so a
                // stall is seen rather than sat through.
                let accepted = loop {
                    let next = (said + SAY_EVERY * 2).min(deadline);
                    match tokio::time::timeout_at(next, l.accept()).await {
                        Ok(a) => break Ok(a),
                        Err(_) if next >= deadline => break Err(()),
                        Err(_) => {
                            said = tokio::time::Instant::now();
                            let mut came: Vec<u64> = r.members.iter().map(|m| m.0).collect();
                            came.sort_unstable();
                            let missing: Vec<u64> =
                                (1..shards).filter(|k| !came.contains(k)).collect();
                            eprintln!(
                                "ingestbench: shard 0/{shards}: waiting at {addr} for shards {missing:?} ({} s left)",
                                deadline.saturating_duration_since(said).as_secs()
                            );
                        }
                    }
                };
                let (s, _) = accepted
                    .map_err(|_| {
                        anyhow::anyhow!(
                            "--rendezvous {addr}: after {} s only shards {:?} of 0..{shards} connected; start every shard with the same --plan-id and --rendezvous",
                            timeout.as_secs(),
                            std::iter::once(0)
                                .chain(r.members.iter().map(|m| m.0))
                                .collect::<Vec<_>>()
                        )
                    })??;
                let (rd, wr) = s.into_split();
                let mut lines = BufReader::new(rd).lines();
                let hello = line(&mut lines, timeout, "a shard's hello").await?;
                let mut f = hello.split_whitespace();
                match (
                    f.next(),
                    f.next(),
                    f.next().and_then(|k| k.parse::<u64>().ok()),
                ) {
                    (Some("hello"), Some(id), Some(k)) if id == plan_id && k > 0 && k < shards => {
                        if r.members.iter().any(|m| m.0 == k) {
                            bail!("--rendezvous: shard {k} connected twice");
                        }
                        r.members.push((k, lines, wr));
                    }
                    _ => bail!(
                        "--rendezvous {addr}: a shard said `{hello}`; expected plan {plan_id} and a shard index 1..{shards}"
                    ),
                }
            }
        } else {
            let s = connect(addr, shard, shards, timeout).await?;
            let (rd, mut wr) = s.into_split();
            wr.write_all(format!("hello {plan_id} {shard}\n").as_bytes())
                .await?;
            r.coordinator = Some((BufReader::new(rd).lines(), wr));
        }
        Ok(r)
    }

    /// Waits until every shard is ready for `run` of `step` (a name without spaces), then
    /// until the agreed start.
    pub async fn barrier(&mut self, run: u32, step: &str) -> Result<Start> {
        let ready = format!("ready {run} {step}");
        let go = if let Some((lines, wr)) = &mut self.coordinator {
            wr.write_all(format!("{ready}\n").as_bytes()).await?;
            let l = line(lines, self.timeout, "waiting for shard 0's start").await?;
            let mut f = l.split_whitespace();
            match (
                f.next(),
                f.next(),
                f.next().and_then(|v| v.parse::<i64>().ok()),
            ) {
                (Some("go"), Some(r), Some(ms)) if r == run.to_string() => ms,
                _ => bail!("--rendezvous: shard 0 said `{l}`, expected `go {run} <ms>`"),
            }
        } else {
            for (k, lines, _) in &mut self.members {
                let what = format!("waiting for shard {k} to be ready for run {run} of {step}");
                let l = line(lines, self.timeout, &what).await?;
                if l.trim() != ready {
                    bail!(
                        "--rendezvous: shard {k} is at `{l}` while shard 0 is at `{ready}`: the shards' plans differ (give every shard the same flags, and make every access method reachable from every shard)"
                    );
                }
            }
            let go = now_ms() + LEAD.as_millis() as i64;
            for (_, _, wr) in &mut self.members {
                wr.write_all(format!("go {run} {go}\n").as_bytes()).await?;
            }
            go
        };
        let wait = go - now_ms();
        if wait > 0 {
            tokio::time::sleep(Duration::from_millis(wait as u64)).await;
        }
        Ok(Start {
            go_unix_ms: go,
            started_unix_ms: now_ms(),
        })
    }

    pub fn shard(&self) -> (u64, u64) {
        (self.shard, self.shards)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    #[tokio::test]
    async fn four_shards_start_together_and_a_missing_one_times_out() {
        let port = free_port();
        let addr = format!("127.0.0.1:{port}");
        let t = Duration::from_secs(5);
        let mut tasks = Vec::new();
        for k in 0..4 {
            let addr = addr.clone();
            tasks.push(tokio::spawn(async move {
                let mut r = Rendezvous::join(&addr, "p1", k, 4, t).await.unwrap();
                let mut starts = Vec::new();
                for run in 1..=2 {
                    starts.push(r.barrier(run, "run").await.unwrap());
                }
                starts
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.push(t.await.unwrap());
        }
        for run in 0..2 {
            let go: Vec<i64> = all.iter().map(|s| s[run].go_unix_ms).collect();
            assert!(go.iter().all(|g| *g == go[0]), "{go:?}");
            let started: Vec<i64> = all.iter().map(|s| s[run].started_unix_ms).collect();
            let skew = started.iter().max().unwrap() - started.iter().min().unwrap();
            assert!(skew < 50, "skew {skew} ms");
        }
        // Two shards at different steps (their plans went apart): stopped, not started.
        let port = free_port();
        let addr = format!("127.0.0.1:{port}");
        let a2 = addr.clone();
        let one = tokio::spawn(async move {
            let mut r = Rendezvous::join(&a2, "p2", 1, 2, t).await.unwrap();
            r.barrier(1, "https_reuse_small_t4").await
        });
        let mut r0 = Rendezvous::join(&addr, "p2", 0, 2, t).await.unwrap();
        let e = r0.barrier(1, "http_reuse_small_t4").await.unwrap_err();
        assert!(format!("{e:#}").contains("plans differ"), "{e:#}");
        drop(r0);
        assert!(one.await.unwrap().is_err());
        // Shard 0 alone, 2 planned: a clear error naming who came.
        let port = free_port();
        let e = Rendezvous::join(
            &format!("127.0.0.1:{port}"),
            "p1",
            0,
            2,
            Duration::from_millis(300),
        )
        .await
        .err()
        .unwrap();
        assert!(
            format!("{e:#}").contains("only shards [0] of 0..2 connected"),
            "{e:#}"
        );
    }

    #[tokio::test]
    async fn a_name_that_does_not_resolve_or_a_closed_port_is_said_and_named() {
        let t = Duration::from_millis(400);
        let e = Rendezvous::join("inj1.invalid:7070", "p", 1, 2, t)
            .await
            .err()
            .unwrap();
        let e = format!("{e:#}");
        assert!(
            e.contains("the name inj1.invalid does not resolve") && e.contains("SSH"),
            "{e}"
        );
        let port = free_port();
        let e = Rendezvous::join(&format!("127.0.0.1:{port}"), "p", 1, 2, t)
            .await
            .err()
            .unwrap();
        assert!(format!("{e:#}").contains("shard 0 not reachable"), "{e:#}");
        let e = Rendezvous::join("no-port", "p", 1, 2, t)
            .await
            .err()
            .unwrap();
        assert!(format!("{e:#}").contains("give HOST:PORT"), "{e:#}");
    }
}
