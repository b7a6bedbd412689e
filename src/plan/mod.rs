//! The validated plan of a `run`, built from the CLI in one place (`TryFrom<&RunArgs>`):
//! every flag a user can get wrong is checked here with a message naming it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::cli::RunArgs;
use crate::fixtures::{Profile, SizeClass, Sizes, parse_size};
use crate::protocol::alfresco::AuthMode;

#[derive(Debug, Clone)]
pub struct RunPlan {
    /// Repository root; `None` = embedded target.
    pub url: Option<reqwest::Url>,
    pub user: String,
    pub password_file: Option<PathBuf>,
    pub auth: AuthMode,
    pub parent: String,
    pub size: SizeClass,
    pub sizes: Sizes,
    pub docs: u64,
    pub threads: u64,
    pub runs: u32,
    pub seed: u64,
    pub profile: Arc<Profile>,
    pub docs_per_folder: u64,
    pub versioning: bool,
    pub timeout: Duration,
    pub ca_cert: Option<PathBuf>,
    pub json: bool,
    pub output: Option<PathBuf>,
    pub results_dir: PathBuf,
    pub quiet: bool,
    pub target_data_dir: Option<PathBuf>,
}

/// The plan as recorded in results (no secrets).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct PlanRecord {
    pub protocol: String,
    pub auth: String,
    pub user: String,
    pub parent: String,
    pub size_class: String,
    pub doc_size_bytes: u64,
    pub docs: u64,
    pub threads: u64,
    pub runs: u32,
    pub seed: u64,
    pub profile: String,
    pub node_type: String,
    pub properties_per_doc: usize,
    pub docs_per_folder: u64,
    pub versioning: bool,
    pub timeout_s: f64,
}

impl RunPlan {
    pub fn doc_size(&self) -> u64 {
        self.sizes.of(self.size)
    }

    pub fn record(&self) -> PlanRecord {
        PlanRecord {
            protocol: "alfresco".into(),
            auth: format!("{:?}", self.auth).to_lowercase(),
            user: self.user.clone(),
            parent: self.parent.clone(),
            size_class: self.size.name().into(),
            doc_size_bytes: self.doc_size(),
            docs: self.docs,
            threads: self.threads,
            runs: self.runs,
            seed: self.seed,
            profile: self.profile.source.clone(),
            node_type: self.profile.node_type.clone(),
            properties_per_doc: self.profile.properties.len(),
            docs_per_folder: self.docs_per_folder,
            versioning: self.versioning,
            timeout_s: self.timeout.as_secs_f64(),
        }
    }
}

/// Parses `--url`: http(s) only, no credentials, no query.
pub fn parse_url(s: &str) -> Result<reqwest::Url> {
    let url = reqwest::Url::parse(s)
        .with_context(|| format!("--url {s}: not a URL; expected e.g. http://alfresco:8080"))?;
    if !matches!(url.scheme(), "http" | "https") {
        bail!(
            "--url {s}: scheme `{}` is not supported; use http:// or https://",
            url.scheme()
        );
    }
    if !url.username().is_empty() || url.password().is_some() {
        bail!(
            "--url must not carry credentials; use --user and INGESTBENCH_PASSWORD or --password-file"
        );
    }
    if url.query().is_some() {
        bail!(
            "--url {}: remove the query string; give the server root",
            redact(&url)
        );
    }
    Ok(url)
}

/// The URL with any credentials removed, for output.
pub fn redact(url: &reqwest::Url) -> String {
    let mut u = url.clone();
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.to_string()
}

impl TryFrom<&RunArgs> for RunPlan {
    type Error = anyhow::Error;

    fn try_from(a: &RunArgs) -> Result<RunPlan> {
        let url = a.url.as_deref().map(parse_url).transpose()?;
        let sizes = Sizes {
            small: parse_size(&a.small_size).context("--small-size")?,
            average: parse_size(&a.average_size).context("--average-size")?,
            large: parse_size(&a.large_size).context("--large-size")?,
        };
        if !(a.timeout.is_finite() && a.timeout > 0.0) {
            bail!(
                "--timeout {}: must be a positive number of seconds",
                a.timeout
            );
        }
        if a.user.is_empty() {
            bail!("--user must not be empty");
        }
        if a.parent.is_empty() || a.parent.contains('/') {
            bail!(
                "--parent `{}`: use -my-, -root-, -shared- or a node id (no paths)",
                a.parent
            );
        }
        if let Some(ca) = &a.ca_cert
            && !ca.is_file()
        {
            bail!("--ca-cert {}: no such file", ca.display());
        }
        let profile = Arc::new(Profile::load(&a.profile)?);
        Ok(RunPlan {
            url,
            user: a.user.clone(),
            password_file: a.password_file.clone(),
            auth: a.auth,
            parent: a.parent.clone(),
            size: a.size,
            sizes,
            docs: a.docs,
            threads: a.threads,
            runs: a.runs,
            seed: a.seed,
            profile,
            docs_per_folder: a.docs_per_folder,
            versioning: !a.no_versioning,
            timeout: Duration::from_secs_f64(a.timeout),
            ca_cert: a.ca_cert.clone(),
            json: a.json,
            output: a.output.clone(),
            results_dir: a.results_dir.clone(),
            quiet: a.quiet,
            target_data_dir: a.target_data_dir.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked() {
        assert!(parse_url("http://localhost:8080").is_ok());
        assert!(format!("{:#}", parse_url("ftp://x").unwrap_err()).contains("--url"));
        assert!(
            format!("{:#}", parse_url("http://u:secret@x").unwrap_err()).contains("credentials")
        );
        assert!(!format!("{:#}", parse_url("http://u:secret@x").unwrap_err()).contains("secret"));
        assert!(parse_url("not a url").is_err());
    }
}
