//! The one conversion of the parsed command line (`cli.rs`) into the flags the plans are
//! built from (`plan::flags`): field by field, nothing checked here (the plans check).

use crate::cli::{CommonArgs, RunArgs, SweepArgs};
use crate::plan::flags::{CommonFlags, RunFlags, SweepFlags};

impl From<&CommonArgs> for CommonFlags {
    fn from(a: &CommonArgs) -> CommonFlags {
        CommonFlags {
            user: a.user.clone(),
            password_file: a.password_file.clone(),
            protocol: a.protocol,
            auth: a.auth,
            parent: a.parent.clone(),
            small_size: a.small_size.clone(),
            average_size: a.average_size.clone(),
            large_size: a.large_size.clone(),
            seed: a.seed,
            profile: a.profile.clone(),
            docs_per_folder: a.docs_per_folder,
            no_versioning: a.no_versioning,
            timeout: a.timeout,
            retries: a.retries,
            quiet: a.quiet,
            fail_if: a.fail_if.clone(),
            json_lines: a.json_lines,
            jtl: a.jtl.clone(),
            metrics_listen: a.metrics_listen.clone(),
            metrics_hold: a.metrics_hold,
            warmup: a.warmup.clone(),
            duration: a.duration.clone(),
            precision: a.precision.clone(),
            max_runs: a.max_runs,
            server_metrics: a.server_metrics.clone(),
            server_pid: a.server_pid.clone(),
            shard: a.shard.clone(),
            shard_index_env: a.shard_index_env.clone(),
            shards: a.shards,
            plan_id: a.plan_id.clone(),
            rendezvous: a.rendezvous.clone(),
            rendezvous_timeout: a.rendezvous_timeout,
        }
    }
}

impl From<&RunArgs> for RunFlags {
    fn from(a: &RunArgs) -> RunFlags {
        RunFlags {
            url: a.url.clone(),
            ca_cert: a.ca_cert.clone(),
            size: a.size,
            docs: a.docs,
            threads: a.threads,
            runs: a.runs,
            json: a.json,
            output: a.output.clone(),
            results_dir: a.results_dir.clone(),
            target_data_dir: a.target_data_dir.clone(),
            corpus: a.corpus.clone(),
            sample: a.sample,
            flatten: a.flatten,
            on_name_clash: a.on_name_clash,
            on_bad_name: a.on_bad_name,
            common: CommonFlags::from(&a.common),
        }
    }
}

impl From<&SweepArgs> for SweepFlags {
    fn from(a: &SweepArgs) -> SweepFlags {
        SweepFlags {
            access_methods: a.access_methods.clone(),
            access_methods_dir: a.access_methods_dir.clone(),
            threads: a.threads.clone(),
            sizes: a.sizes.clone(),
            connection: a.connection.clone(),
            docs: a.docs,
            runs: a.runs,
            order: a.order,
            baseline: a.baseline.clone(),
            budget: a.budget.clone(),
            corpus: a.corpus.clone(),
            common: CommonFlags::from(&a.common),
        }
    }
}
