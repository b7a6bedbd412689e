//! Reads the Prometheus text exposition format (version 0.0.4), as node_exporter serves it:
//! `name{label="value",...} value [timestamp]` a line, `#` lines and blank lines skipped.
//! Only what the servers' probes need: each sample's name, labels and value; types, help
//! text and timestamps are not kept. A line that is not a sample is an error naming it.
//! Written here rather than taken from a crate: the one we used brought a regex engine and a
//! date library into every build for a few dozen lines of parsing.

/// One sample line.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub metric: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

impl Sample {
    /// The value of a label, if the sample has it.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Every sample of a text exposition, in order.
pub fn parse(text: &str) -> Result<Vec<Sample>, String> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        out.push(sample(line).map_err(|e| format!("line {}: {e}: {raw:?}", i + 1))?);
    }
    Ok(out)
}

fn sample(line: &str) -> Result<Sample, String> {
    let name_end = line
        .find(|c: char| c == '{' || c.is_whitespace())
        .ok_or("no value")?;
    let metric = &line[..name_end];
    if metric.is_empty()
        || !metric
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    {
        return Err(format!("not a metric name: {metric:?}"));
    }
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(body) = rest.strip_prefix('{') {
        let (parsed, after) = label_set(body)?;
        labels = parsed;
        rest = after;
    }
    let value = rest.split_whitespace().next().ok_or("no value")?;
    let value = match value {
        "+Inf" | "Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        v => v
            .parse::<f64>()
            .map_err(|_| format!("not a number: {v:?}"))?,
    };
    Ok(Sample {
        metric: metric.to_string(),
        labels,
        value,
    })
}

/// The labels after `{`, up to and including `}`; returns them and what follows.
#[allow(clippy::type_complexity)]
fn label_set(mut s: &str) -> Result<(Vec<(String, String)>, &str), String> {
    let mut labels = Vec::new();
    loop {
        s = s.trim_start();
        if let Some(after) = s.strip_prefix('}') {
            return Ok((labels, after));
        }
        let eq = s.find('=').ok_or("a label without '='")?;
        let name = s[..eq].trim().to_string();
        s = s[eq + 1..].trim_start();
        s = s.strip_prefix('"').ok_or("a label value without quotes")?;
        let mut value = String::new();
        let mut chars = s.char_indices();
        let end = loop {
            match chars.next() {
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, c)) => value.push(c),
                    None => return Err("an unterminated label value".into()),
                },
                Some((_, c)) => value.push(c),
                None => return Err("an unterminated label value".into()),
            }
        };
        labels.push((name, value));
        s = s[end + 1..].trim_start();
        s = s.strip_prefix(',').unwrap_or(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_exporter_lines() {
        let text = "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n\
                    # TYPE node_cpu_seconds_total counter\n\
                    node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 1234.5\n\
                    node_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 1.25e+02\n\
                    \n\
                    node_memory_MemTotal_bytes 2.5769803776e+10\n\
                    weird{a=\"x\\\"y\\\\z\\n\", b=\"\"} NaN 1700000000000\n\
                    up +Inf\n";
        let s = parse(text).unwrap();
        assert_eq!(s.len(), 5);
        assert_eq!(s[0].metric, "node_cpu_seconds_total");
        assert_eq!(s[0].label("mode"), Some("idle"));
        assert_eq!(s[0].value, 1234.5);
        assert_eq!(s[1].value, 125.0);
        assert_eq!(s[2].labels, vec![]);
        assert_eq!(s[2].value, 25769803776.0);
        assert_eq!(s[3].label("a"), Some("x\"y\\z\n"));
        assert_eq!(s[3].label("b"), Some(""));
        assert!(s[3].value.is_nan());
        assert_eq!(s[4].value, f64::INFINITY);
    }

    #[test]
    fn not_the_format_is_named() {
        let e = parse("<html>hello</html>\n").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        assert!(parse("node_x{cpu=\"0\" 1\n").is_err());
        assert!(parse("node_x 12abc\n").is_err());
    }
}
