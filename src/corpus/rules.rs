//! The pre-flight check's rules (`ingestbench corpus PATH --check REPO`) and the import's
//! renaming policy (`--on-bad-name`, `--on-name-clash`), over what each repository refuses or
//! handles badly as the protocol layer states it ([`crate::protocol::facts`], with the vendor
//! sources each API's module cites). Pure functions of names and sizes: no I/O, nothing about
//! where a name comes from. Every rule cites its source in [`Rule::source`]; the same
//! citations are in docs/corpus.md#pre-flight-check.

use crate::protocol::facts::{self, Metadata};
use crate::protocol_kind::ProtocolKind;

/// What a flagged item does at import time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The repository refuses the upload: it fails (counted as failed by `run`).
    Refused,
    /// ingestbench does not upload it (say, a version file without its head file).
    Skipped,
    /// It imports, but not as the source meant (metadata dropped, names that look alike, a
    /// folder too large to browse well): worth a look before the cutover.
    Warning,
}

/// One rule of the pre-flight check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    NameClash,
    NameRefusedCharacter,
    NameTrailingDotOrSpace,
    NameReserved,
    NameEmpty,
    NameTooLong,
    NameUnicodeNormalisation,
    SizeOverLimit,
    MetadataUnknownType,
    MetadataUnknownProperty,
    MetadataBadValue,
    MetadataRequiredMissing,
    MetadataUnknownAspect,
    VersionOrphan,
    VersionGap,
    FolderFanOut,
}

/// Most entries (documents and folders) in one folder before [`Rule::FolderFanOut`] warns.
pub const FAN_OUT_WARN: u64 = 1000;

impl Rule {
    /// Every rule, in report order.
    pub const ALL: [Rule; 16] = [
        Rule::NameClash,
        Rule::NameRefusedCharacter,
        Rule::NameTrailingDotOrSpace,
        Rule::NameReserved,
        Rule::NameEmpty,
        Rule::NameTooLong,
        Rule::NameUnicodeNormalisation,
        Rule::SizeOverLimit,
        Rule::MetadataUnknownType,
        Rule::MetadataUnknownProperty,
        Rule::MetadataBadValue,
        Rule::MetadataRequiredMissing,
        Rule::MetadataUnknownAspect,
        Rule::VersionOrphan,
        Rule::VersionGap,
        Rule::FolderFanOut,
    ];

    /// The rule's name in corpus.json and in the printed lines.
    pub fn id(self) -> &'static str {
        match self {
            Rule::NameClash => "name-clash",
            Rule::NameRefusedCharacter => "name-refused-character",
            Rule::NameTrailingDotOrSpace => "name-trailing-dot-or-space",
            Rule::NameReserved => "name-reserved",
            Rule::NameEmpty => "name-empty",
            Rule::NameTooLong => "name-too-long",
            Rule::NameUnicodeNormalisation => "name-unicode-normalisation",
            Rule::SizeOverLimit => "size-over-limit",
            Rule::MetadataUnknownType => "metadata-unknown-type",
            Rule::MetadataUnknownProperty => "metadata-unknown-property",
            Rule::MetadataBadValue => "metadata-bad-value",
            Rule::MetadataRequiredMissing => "metadata-required-missing",
            Rule::MetadataUnknownAspect => "metadata-unknown-aspect",
            Rule::VersionOrphan => "version-orphan",
            Rule::VersionGap => "version-gap",
            Rule::FolderFanOut => "folder-fan-out",
        }
    }

    /// Whether `repo` has this rule at all (a rule it does not have is never counted).
    pub fn applies(self, repo: ProtocolKind) -> bool {
        let facts = facts::of(repo);
        let names = &facts.names;
        match self {
            Rule::NameTrailingDotOrSpace => names.refuses_trailing_dot_or_space,
            Rule::NameReserved => !names.reserved_stems.is_empty(),
            Rule::NameTooLong => names.max_chars.is_some(),
            Rule::SizeOverLimit => facts.max_size.is_some(),
            Rule::MetadataUnknownType
            | Rule::MetadataRequiredMissing
            | Rule::MetadataUnknownAspect => facts.metadata == Metadata::ContentModel,
            _ => true,
        }
    }

    /// What an item flagged by this rule does at import into `repo`.
    pub fn severity(self, repo: ProtocolKind) -> Severity {
        match self {
            Rule::NameUnicodeNormalisation
            | Rule::MetadataUnknownAspect
            | Rule::VersionGap
            | Rule::FolderFanOut => Severity::Warning,
            // A repository without a content model takes only the properties the profile
            // maps, converted by it.
            Rule::MetadataUnknownProperty | Rule::MetadataBadValue
                if facts::of(repo).metadata != Metadata::ContentModel =>
            {
                Severity::Warning
            }
            Rule::VersionOrphan => Severity::Skipped,
            _ => Severity::Refused,
        }
    }

    /// What the rule says, for `repo`.
    pub fn says(self, repo: ProtocolKind) -> &'static str {
        let facts = facts::of(repo);
        let model = facts.metadata == Metadata::ContentModel;
        match self {
            Rule::NameClash => facts.names.clash_says,
            Rule::NameRefusedCharacter => facts.names.refused_says,
            Rule::NameTrailingDotOrSpace => "a name ending in a dot or a space",
            Rule::NameReserved => facts.names.reserved_says,
            Rule::NameEmpty => "an empty name",
            Rule::NameTooLong => facts.names.max_chars.map_or("", |l| l.says),
            Rule::NameUnicodeNormalisation => {
                "names that differ only in Unicode normalisation (NFC/NFD) in one folder: both import, looking the same"
            }
            Rule::SizeOverLimit => facts.max_size.map_or("", |l| l.says),
            Rule::MetadataUnknownType => "a shadow file's type unknown to the content model (400)",
            Rule::MetadataUnknownProperty if model => {
                "a shadow property unknown to the content model (400)"
            }
            Rule::MetadataUnknownProperty => {
                "a shadow property no profile property maps (not imported)"
            }
            Rule::MetadataBadValue if model => {
                "a shadow value that does not convert to its property's type (400)"
            }
            Rule::MetadataBadValue => {
                "a shadow value that does not parse as its profile property's type"
            }
            Rule::MetadataRequiredMissing => "a mandatory property of the type not set (422)",
            Rule::MetadataUnknownAspect => {
                "a shadow aspect unknown to the content model (the REST import does not apply shadow aspects)"
            }
            Rule::VersionOrphan => "a version file without its head file (not imported)",
            Rule::VersionGap => "version numbers that skip (imported in number order)",
            Rule::FolderFanOut => "a folder with more than 1000 entries",
        }
    }

    /// Where the rule comes from, for `repo` (empty for a rule `repo` does not have).
    pub fn source(self, repo: ProtocolKind) -> &'static str {
        if !self.applies(repo) {
            return "";
        }
        let facts = facts::of(repo);
        let model = facts.metadata == Metadata::ContentModel;
        match self {
            Rule::NameClash => facts.names.clash_source,
            Rule::NameRefusedCharacter
            | Rule::NameTrailingDotOrSpace
            | Rule::NameReserved
            | Rule::NameEmpty => facts.names.source,
            Rule::NameTooLong => facts.names.max_chars.map_or("", |l| l.source),
            Rule::NameUnicodeNormalisation => {
                "none of the three normalises names (Liferay: unicode.text.normalizer.form empty by default)"
            }
            Rule::SizeOverLimit => facts.max_size.map_or("", |l| l.source),
            Rule::MetadataUnknownType
            | Rule::MetadataUnknownProperty
            | Rule::MetadataBadValue
            | Rule::MetadataRequiredMissing
            | Rule::MetadataUnknownAspect
                if model =>
            {
                "Alfresco REST API v1 nodes/{id}/children: the content model (fixtures/alfresco/acme-model.xml)"
            }
            Rule::MetadataUnknownProperty | Rule::MetadataBadValue => {
                "the metadata profile's `shadow =` mappings and types"
            }
            Rule::MetadataUnknownType
            | Rule::MetadataRequiredMissing
            | Rule::MetadataUnknownAspect => "",
            Rule::VersionOrphan | Rule::VersionGap => {
                "Alfresco Bulk Filesystem Import version files <file>.vN"
            }
            Rule::FolderFanOut => {
                "operators' advice: keep folders well under a few thousand children (dbi-services.com/blog/alfresco-mass-removal-cleanup-of-documents; Alfresco's BM loader uses 100 per folder)"
            }
        }
    }
}

/// The key under which `repo` compares names in a folder: two names with the same key clash.
pub fn name_key(repo: ProtocolKind, name: &str) -> String {
    facts::of(repo).names.key(name)
}

/// The rules a single name breaks in `repo` (not clashes: those need the folder).
pub fn name_problems(repo: ProtocolKind, name: &str) -> Vec<Rule> {
    if name.is_empty() {
        return vec![Rule::NameEmpty];
    }
    let names = &facts::of(repo).names;
    [
        (names.has_refused(name), Rule::NameRefusedCharacter),
        (names.bad_ending(name), Rule::NameTrailingDotOrSpace),
        (names.reserved(name), Rule::NameReserved),
        (names.too_long(name), Rule::NameTooLong),
    ]
    .into_iter()
    .filter_map(|(broken, rule)| broken.then_some(rule))
    .collect()
}

/// Whether `repo` refuses a name on its own (empty, refused character, trailing dot or
/// space, reserved, too long): what the embedded target checks, and `--on-bad-name` acts on.
pub fn name_refused(repo: ProtocolKind, name: &str) -> bool {
    facts::of(repo).names.refuses(name)
}

/// The largest file `repo` takes by default, if it has a limit.
pub fn max_size(repo: ProtocolKind) -> Option<u64> {
    facts::of(repo).max_size.map(|l| l.value)
}

/// A name `repo` takes in place of a refused one ([`facts::NameRules::fix`]).
pub fn fix_name(repo: ProtocolKind, name: &str) -> String {
    facts::of(repo).names.fix(name)
}

/// The `n`th (from 2) deterministic alternative to a clashing name: `stem-n.ext`, as
/// Alfresco's own autoRename numbers them.
pub fn numbered(name: &str, n: u64) -> String {
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => format!("{stem}-{n}.{ext}"),
        _ => format!("{name}-{n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProtocolKind::*;

    #[test]
    fn names_as_each_repository_judges_them() {
        assert!(name_problems(Alfresco, "report.pdf").is_empty());
        assert_eq!(
            name_problems(Alfresco, "a:b"),
            vec![Rule::NameRefusedCharacter]
        );
        assert_eq!(
            name_problems(Alfresco, "x."),
            vec![Rule::NameTrailingDotOrSpace]
        );
        assert_eq!(name_problems(Cmis, "x."), Vec::<Rule>::new());
        assert_eq!(name_problems(Liferay, "CON.txt"), vec![Rule::NameReserved]);
        assert!(name_problems(Alfresco, "CON.txt").is_empty());
        assert_eq!(name_problems(Liferay, ""), vec![Rule::NameEmpty]);
        let long = "a".repeat(256);
        assert_eq!(name_problems(Liferay, &long), vec![Rule::NameTooLong]);
        assert!(name_problems(Alfresco, &long).is_empty());
        assert_eq!(
            name_key(Alfresco, "Index.html"),
            name_key(Alfresco, "index.html")
        );
        assert_ne!(name_key(Cmis, "Index.html"), name_key(Cmis, "index.html"));
    }

    #[test]
    fn fixed_names_pass() {
        for repo in [Alfresco, Liferay, Cmis] {
            for bad in [
                "a:b.txt",
                "x.",
                "trail ",
                "",
                "con.txt",
                "a*b?c",
                &"b".repeat(300),
            ] {
                let f = fix_name(repo, bad);
                assert!(!name_refused(repo, &f), "{repo:?} {bad:?} -> {f:?}");
            }
        }
        assert_eq!(fix_name(Alfresco, "a:b.txt"), "a_b.txt");
        assert_eq!(fix_name(Liferay, "con.txt"), "con_.txt");
        assert_eq!(fix_name(Alfresco, "x."), "x_");
        assert_eq!(numbered("Index.html", 2), "Index-2.html");
        assert_eq!(numbered("README", 3), "README-3");
    }
}
