//! What each repository is, as data: how it judges and compares names, the largest file it
//! takes, how it checks metadata, and how many requests a document's versions and folders
//! cost. Each API's module states its own [`Repository`] with the vendor sources it comes
//! from (`alfresco::FACTS`, `liferay::FACTS`, `cmis::FACTS`); [`of`] (or
//! `ProtocolKind::facts`, in the parent module) finds it for a [`ProtocolKind`], so the pre-flight check (`corpus`), the estimates (`analysis`) and the
//! embedded target (`emulator`) ask here instead of matching on the kind. Pure data and pure
//! functions of names: no I/O.

use crate::protocol_kind::ProtocolKind;

/// One repository's facts.
#[derive(Debug)]
pub struct Repository {
    pub names: NameRules,
    /// The largest file it takes by default, if it has a limit.
    pub max_size: Option<Limit>,
    /// How it checks the metadata sent with an upload.
    pub metadata: Metadata,
    /// What an import asks of it beyond one upload per document.
    pub requests: Requests,
}

/// A limit, what going over it is in the pre-flight report, and where the repository sets it.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    pub value: u64,
    pub says: &'static str,
    pub source: &'static str,
}

/// How a repository judges a name on its own and compares names in a folder.
#[derive(Debug)]
pub struct NameRules {
    /// Whether two names that differ only in case clash in a folder.
    pub folds_case: bool,
    /// What clashes, for the pre-flight report, and where the repository compares names.
    pub clash_says: &'static str,
    pub clash_source: &'static str,
    /// Substrings it refuses in a name, in the order they are replaced (longest first where
    /// one contains another).
    pub refused: &'static [&'static str],
    /// The refused substrings as the pre-flight report lists them, with the failure status.
    pub refused_says: &'static str,
    /// Whether it refuses a name ending in a dot or a space.
    pub refuses_trailing_dot_or_space: bool,
    /// Stems (the name before its extension) it refuses in any case, and how the pre-flight
    /// report names them.
    pub reserved_stems: &'static [&'static str],
    pub reserved_says: &'static str,
    /// The longest name it stores, in characters, if it has a limit.
    pub max_chars: Option<Limit>,
    /// Where its name validation is (refused substrings, endings, reserved stems).
    pub source: &'static str,
}

/// How a repository checks the metadata an upload sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metadata {
    /// Against its content model (types, properties, aspects), refusing what the model does
    /// not know (Alfresco: `alfresco::model::Dictionary`).
    ContentModel,
    /// Only the properties the metadata profile maps are sent, converted by it.
    Profile,
}

/// Requests an import costs beyond one upload per document.
#[derive(Debug, Clone, Copy)]
pub struct Requests {
    /// Per version after the first: its API's calls (CMIS a check-out and a check-in).
    pub per_version: u64,
    /// Per version whose metadata changes from the one before (Alfresco: a properties update).
    pub per_property_update: u64,
    /// Per folder (0 where the upload that first needs a folder creates it).
    pub per_folder: u64,
}

/// The facts of `kind` (each API's module states its own: `alfresco::FACTS`, ...).
pub fn of(kind: ProtocolKind) -> &'static Repository {
    kind.facts()
}

/// The character that takes the place of a refused one in [`NameRules::fix`].
const REPLACEMENT: &str = "_";

impl NameRules {
    /// The key under which names are compared in a folder: two names with the same key clash.
    pub fn key(&self, name: &str) -> String {
        if self.folds_case {
            name.to_lowercase()
        } else {
            name.to_string()
        }
    }

    /// Whether `name` holds a refused substring.
    pub fn has_refused(&self, name: &str) -> bool {
        self.refused.iter().any(|r| name.contains(r))
    }

    /// Whether `name` ends in a dot or a space and the repository refuses that.
    pub fn bad_ending(&self, name: &str) -> bool {
        self.refuses_trailing_dot_or_space && (name.ends_with('.') || name.ends_with(' '))
    }

    /// Whether `name`'s stem is reserved.
    pub fn reserved(&self, name: &str) -> bool {
        let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
        self.reserved_stems
            .iter()
            .any(|r| stem.eq_ignore_ascii_case(r))
    }

    /// Whether `name` is longer than the repository stores.
    pub fn too_long(&self, name: &str) -> bool {
        self.max_chars
            .is_some_and(|max| name.chars().count() as u64 > max.value)
    }

    /// Whether the repository refuses `name` on its own (empty, refused substring, trailing
    /// dot or space, reserved, too long).
    pub fn refuses(&self, name: &str) -> bool {
        name.is_empty()
            || self.has_refused(name)
            || self.bad_ending(name)
            || self.reserved(name)
            || self.too_long(name)
    }

    /// A name the repository takes in place of a refused one, deterministic: refused
    /// substrings become `_`, trailing dots and spaces become `_`, a reserved stem gets `_`
    /// appended (as Liferay's own `DLValidatorImpl.fixName` does), an over-long name is cut
    /// keeping its extension, and an empty one is `_`.
    pub fn fix(&self, name: &str) -> String {
        let mut n = name.to_string();
        for r in self.refused {
            n = n.replace(r, REPLACEMENT);
        }
        if self.refuses_trailing_dot_or_space {
            let kept = n.trim_end_matches(['.', ' ']).len();
            let cut = n.len() - kept;
            n.truncate(kept);
            n.push_str(&REPLACEMENT.repeat(cut));
        }
        if n.is_empty() {
            n.push_str(REPLACEMENT);
        }
        if self.reserved(&n) {
            n = match n.rsplit_once('.') {
                Some((stem, ext)) => format!("{stem}{REPLACEMENT}.{ext}"),
                None => format!("{n}{REPLACEMENT}"),
            };
        }
        if let Some(max) = self.max_chars
            && self.too_long(&n)
        {
            n = shorten(&n, max.value as usize);
        }
        n
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use ProtocolKind::*;

    #[test]
    fn each_kind_finds_its_own_facts() {
        assert!(of(Alfresco).names.folds_case && of(Liferay).names.folds_case);
        assert!(!of(Cmis).names.folds_case);
        assert_eq!(of(Liferay).max_size.map(|l| l.value), Some(104_857_600));
        assert!(of(Alfresco).max_size.is_none() && of(Cmis).max_size.is_none());
        assert_eq!(of(Alfresco).metadata, Metadata::ContentModel);
        assert_eq!(of(Cmis).requests.per_version, 2);
    }
}
