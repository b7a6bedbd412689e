//! What each repository refuses or handles badly, as its own source code or configuration
//! says, for the pre-flight check (`ingestbench corpus PATH --check REPO`) and for the
//! import's renaming policy (`--on-bad-name`, `--on-name-clash`). Pure functions of names and
//! sizes: no I/O, nothing about where a name comes from. Every rule cites its source in
//! [`Rule::source`]; the same citations are in docs/estimate.md#pre-flight-check.
//!
//! Sources (read for this module):
//! - Alfresco: `repository/src/main/resources/alfresco/model/contentModel.xml` of
//!   Alfresco/alfresco-community-repo (commit 72635d6c), constraint `cm:filename` on `cm:name`:
//!   the regex `(.*[\"\*\\\>\<\?\/\:\|]+.*)|(.*[\.]?.*[\.]+$)|(.*[ ]+$)` must not match;
//!   `cm:name` is mandatory (enforced). Names in a folder are unique as
//!   `ChildAssocEntity.getChildNodeNameCrc(childName.toLowerCase())` computes them
//!   (`repository/src/main/java/org/alfresco/repo/domain/node/ChildAssocEntity.java`):
//!   case-insensitive. `repository.properties`: `system.content.maximumFileSizeLimit=` (empty:
//!   no size limit). `QName.MAX_LENGTH = 255` truncates the association name, not `cm:name`:
//!   no length limit on names.
//! - Liferay DXP: `DLValidatorImpl.isValidName` (document-library-service) refuses a name that
//!   is empty, contains an entry of `dl.char.blacklist`, ends with one of
//!   `dl.char.last.blacklist`, or whose name without extension is one of `dl.name.blacklist`
//!   (case-insensitive); `portal-impl/src/portal.properties` sets them to
//!   `\\ // : * ? " < > | ../ /..`, `\u0020 .` and `con prn aux nul com1..com9 lpt1..lpt9`.
//!   `validateFileSize`: the global limit is the smallest non-zero of
//!   `UploadServletRequestConfiguration.maxSize` (default 104857600, 100 MiB) and
//!   `DLSizeLimitConfiguration.fileMaxSize` (default 0: none). The title and the file name are
//!   each unique in a folder (`DuplicateFileEntryException`), compared by the database
//!   (case-insensitive under MySQL's and SQL Server's default collations, as the embedded
//!   target does); `DLFileEntry.title` and `fileName` are 255-character columns.
//! - CMIS (Apache Chemistry OpenCMIS 1.1.0, commit 9e49c685): InMemory
//!   `NameValidator.isValidName` refuses an empty name or one with `/ \ : " * ? < > |`, and
//!   `ObjectStoreImpl.hasChild` compares names with `String.equals` (case-sensitive);
//!   FileShare refuses an empty name or one with the platform's separators and stores files
//!   on the server's file system. Neither limits sizes or refuses trailing dots or spaces.

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

/// Liferay's default global upload limit (`UploadServletRequestConfiguration.maxSize`).
pub const LIFERAY_MAX_SIZE: u64 = 104_857_600;

/// Liferay's longest title or file name (`DLFileEntry.title`, `fileName`: 255 characters).
pub const LIFERAY_MAX_NAME_CHARS: usize = 255;

const ALFRESCO_REFUSED: &[char] = &['"', '*', '\\', '>', '<', '?', '/', ':', '|'];
const CMIS_REFUSED: &[char] = &['/', '\\', ':', '"', '*', '?', '<', '>', '|'];
/// `dl.char.blacklist`; the single `/` cannot reach Liferay as part of a file name either
/// (the headless API refuses it), so it is refused here too.
const LIFERAY_REFUSED: &[&str] = &[
    "\\", "//", ":", "*", "?", "\"", "<", ">", "|", "../", "/..", "/",
];
const LIFERAY_RESERVED: &[&str] = &[
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

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
        use ProtocolKind::*;
        match self {
            Rule::NameTrailingDotOrSpace => repo != Cmis,
            Rule::NameReserved | Rule::NameTooLong | Rule::SizeOverLimit => repo == Liferay,
            Rule::MetadataUnknownType
            | Rule::MetadataRequiredMissing
            | Rule::MetadataUnknownAspect => repo == Alfresco,
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
            // Liferay and CMIS take only the properties the profile maps, converted by it.
            Rule::MetadataUnknownProperty | Rule::MetadataBadValue
                if repo != ProtocolKind::Alfresco =>
            {
                Severity::Warning
            }
            Rule::VersionOrphan => Severity::Skipped,
            _ => Severity::Refused,
        }
    }

    /// What the rule says, for `repo`.
    pub fn says(self, repo: ProtocolKind) -> &'static str {
        use ProtocolKind::*;
        match (self, repo) {
            (Rule::NameClash, Alfresco) => {
                "names equal ignoring case in one folder (409 on the second)"
            }
            (Rule::NameClash, Liferay) => {
                "titles or file names equal ignoring case in one folder (409 on the second)"
            }
            (Rule::NameClash, Cmis) => {
                "the same name twice in one folder (409 nameConstraintViolation)"
            }
            (Rule::NameRefusedCharacter, Alfresco) => "a name with * \" < > \\ / ? : | (422)",
            (Rule::NameRefusedCharacter, Liferay) => {
                "a name with \\ // : * ? \" < > | ../ /.. (400)"
            }
            (Rule::NameRefusedCharacter, Cmis) => {
                "a name with / \\ : \" * ? < > | (409 nameConstraintViolation)"
            }
            (Rule::NameTrailingDotOrSpace, _) => "a name ending in a dot or a space",
            (Rule::NameReserved, _) => {
                "a name that is CON, PRN, AUX, NUL, COM1-9 or LPT1-9 before its extension"
            }
            (Rule::NameEmpty, _) => "an empty name",
            (Rule::NameTooLong, _) => "a name over 255 characters",
            (Rule::NameUnicodeNormalisation, _) => {
                "names that differ only in Unicode normalisation (NFC/NFD) in one folder: both import, looking the same"
            }
            (Rule::SizeOverLimit, _) => "a file over the default upload limit of 100 MiB",
            (Rule::MetadataUnknownType, _) => {
                "a shadow file's type unknown to the content model (400)"
            }
            (Rule::MetadataUnknownProperty, Alfresco) => {
                "a shadow property unknown to the content model (400)"
            }
            (Rule::MetadataUnknownProperty, _) => {
                "a shadow property no profile property maps (not imported)"
            }
            (Rule::MetadataBadValue, Alfresco) => {
                "a shadow value that does not convert to its property's type (400)"
            }
            (Rule::MetadataBadValue, _) => {
                "a shadow value that does not parse as its profile property's type"
            }
            (Rule::MetadataRequiredMissing, _) => "a mandatory property of the type not set (422)",
            (Rule::MetadataUnknownAspect, _) => {
                "a shadow aspect unknown to the content model (the REST import does not apply shadow aspects)"
            }
            (Rule::VersionOrphan, _) => "a version file without its head file (not imported)",
            (Rule::VersionGap, _) => "version numbers that skip (imported in number order)",
            (Rule::FolderFanOut, _) => "a folder with more than 1000 entries",
        }
    }

    /// Where the rule comes from, for `repo`.
    pub fn source(self, repo: ProtocolKind) -> &'static str {
        use ProtocolKind::*;
        match (self, repo) {
            (Rule::NameClash, Alfresco) => {
                "alfresco-community-repo ChildAssocEntity.getChildNodeNameCrc(childName.toLowerCase())"
            }
            (Rule::NameClash, Liferay) => {
                "liferay-portal DLFileEntryLocalServiceImpl (DuplicateFileEntryException: title, file name)"
            }
            (Rule::NameClash, Cmis) => {
                "chemistry-opencmis InMemory ObjectStoreImpl.hasChild (String.equals)"
            }
            (
                Rule::NameRefusedCharacter | Rule::NameTrailingDotOrSpace | Rule::NameEmpty,
                Alfresco,
            ) => "alfresco-community-repo contentModel.xml, constraint cm:filename on cm:name",
            (
                Rule::NameRefusedCharacter
                | Rule::NameTrailingDotOrSpace
                | Rule::NameReserved
                | Rule::NameEmpty,
                Liferay,
            ) => {
                "liferay-portal DLValidatorImpl.isValidName; portal.properties dl.char.blacklist, dl.char.last.blacklist, dl.name.blacklist"
            }
            (Rule::NameRefusedCharacter | Rule::NameEmpty, Cmis) => {
                "chemistry-opencmis InMemory NameValidator.isValidName"
            }
            (Rule::NameTooLong, _) => {
                "liferay-portal DLFileEntry title and fileName: 255 characters"
            }
            (Rule::NameUnicodeNormalisation, _) => {
                "none of the three normalises names (Liferay: unicode.text.normalizer.form empty by default)"
            }
            (Rule::SizeOverLimit, _) => {
                "liferay-portal DLValidatorImpl.validateFileSize; UploadServletRequestConfiguration maxSize=104857600"
            }
            (
                Rule::MetadataUnknownType
                | Rule::MetadataUnknownProperty
                | Rule::MetadataBadValue
                | Rule::MetadataRequiredMissing
                | Rule::MetadataUnknownAspect,
                Alfresco,
            ) => {
                "Alfresco REST API v1 nodes/{id}/children: the content model (fixtures/alfresco/acme-model.xml)"
            }
            (Rule::MetadataUnknownProperty | Rule::MetadataBadValue, _) => {
                "the metadata profile's `shadow =` mappings and types"
            }
            (Rule::MetadataUnknownAspect, _) => "the REST import sends no aspects",
            (Rule::VersionOrphan | Rule::VersionGap, _) => {
                "Alfresco Bulk Filesystem Import version files <file>.vN"
            }
            (Rule::FolderFanOut, _) => {
                "operators' advice: keep folders well under a few thousand children (dbi-services.com/blog/alfresco-mass-removal-cleanup-of-documents; Alfresco's BM loader uses 100 per folder)"
            }
            (_, _) => "",
        }
    }
}

/// The key under which `repo` compares names in a folder: two names with the same key clash.
pub fn name_key(repo: ProtocolKind, name: &str) -> String {
    match repo {
        ProtocolKind::Alfresco | ProtocolKind::Liferay => name.to_lowercase(),
        ProtocolKind::Cmis => name.to_string(),
    }
}

/// The rules a single name breaks in `repo` (not clashes: those need the folder).
pub fn name_problems(repo: ProtocolKind, name: &str) -> Vec<Rule> {
    let mut out = Vec::new();
    if name.is_empty() {
        out.push(Rule::NameEmpty);
        return out;
    }
    let refused = match repo {
        ProtocolKind::Alfresco => name.contains(ALFRESCO_REFUSED),
        ProtocolKind::Cmis => name.contains(CMIS_REFUSED),
        ProtocolKind::Liferay => LIFERAY_REFUSED.iter().any(|b| name.contains(b)),
    };
    if refused {
        out.push(Rule::NameRefusedCharacter);
    }
    if repo != ProtocolKind::Cmis && (name.ends_with('.') || name.ends_with(' ')) {
        out.push(Rule::NameTrailingDotOrSpace);
    }
    if repo == ProtocolKind::Liferay {
        let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
        if LIFERAY_RESERVED
            .iter()
            .any(|r| stem.eq_ignore_ascii_case(r))
        {
            out.push(Rule::NameReserved);
        }
        if name.chars().count() > LIFERAY_MAX_NAME_CHARS {
            out.push(Rule::NameTooLong);
        }
    }
    out
}

/// Whether `repo` refuses a name on its own (empty, refused character, trailing dot or
/// space, reserved, too long): what the embedded target checks, and `--on-bad-name` acts on.
pub fn name_refused(repo: ProtocolKind, name: &str) -> bool {
    !name_problems(repo, name).is_empty()
}

/// The largest file `repo` takes by default, if it has a limit.
pub fn max_size(repo: ProtocolKind) -> Option<u64> {
    (repo == ProtocolKind::Liferay).then_some(LIFERAY_MAX_SIZE)
}

/// A name `repo` takes in place of a refused one, deterministic: refused characters become
/// `_`, trailing dots and spaces become `_`, a reserved stem gets `_` appended (as Liferay's
/// own `DLValidatorImpl.fixName` does), an over-long name is cut keeping its extension, and
/// an empty one is `_`.
pub fn fix_name(repo: ProtocolKind, name: &str) -> String {
    let mut n: String = match repo {
        ProtocolKind::Alfresco => name.replace(ALFRESCO_REFUSED, "_"),
        ProtocolKind::Cmis => name.replace(CMIS_REFUSED, "_"),
        ProtocolKind::Liferay => {
            let mut s = name.to_string();
            for b in LIFERAY_REFUSED {
                s = s.replace(b, "_");
            }
            s
        }
    };
    if repo != ProtocolKind::Cmis {
        let kept = n.trim_end_matches(['.', ' ']).len();
        let cut = n.len() - kept;
        n.truncate(kept);
        n.push_str(&"_".repeat(cut));
    }
    if n.is_empty() {
        n.push('_');
    }
    if repo == ProtocolKind::Liferay {
        let (stem, ext) = match n.rsplit_once('.') {
            Some((s, e)) => (s.to_string(), Some(e.to_string())),
            None => (n.clone(), None),
        };
        if LIFERAY_RESERVED
            .iter()
            .any(|r| stem.eq_ignore_ascii_case(r))
        {
            n = match ext {
                Some(e) => format!("{stem}_.{e}"),
                None => format!("{stem}_"),
            };
        }
        if n.chars().count() > LIFERAY_MAX_NAME_CHARS {
            n = shorten(&n, LIFERAY_MAX_NAME_CHARS);
        }
    }
    n
}

/// `name` cut to `max` characters, keeping a short extension.
fn shorten(name: &str, max: usize) -> String {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e)
        .filter(|e| e.chars().count() < 16)
        .map(|e| format!(".{e}"))
        .unwrap_or_default();
    let keep = max - ext.chars().count();
    let stem: String = name.chars().take(keep).collect();
    format!("{stem}{ext}")
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
