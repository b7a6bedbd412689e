//! What metadata `verify` expects of a document, and how it compares: the profile's generated
//! values, or for a corpus document the values of its bulk-import shadow file (the head's for
//! the document; for a version its own `.metadata.properties.xml.vN`, else the head's), each
//! compared by the type the profile declares for it (dates as instants, numbers as numbers,
//! booleans, multi-valued as lists). A shadow property no profile property types is
//! compared by the shape of its value (equal text, or the same number, instant or boolean).

use std::collections::BTreeMap;

use crate::fixtures::{PropType, ShadowMetadata, shadow};
use crate::protocol_kind::ProtocolKind;
use crate::results::manifest::ManifestEntry;

use super::{Expect, same_value};

/// One property's expected values and the type to compare them by.
pub struct Want {
    pub name: String,
    pub ty: Option<PropType>,
    pub values: Vec<String>,
}

/// The shadow metadata a corpus document (its source file `source`) was sent with: for
/// version `label` its own file if it has one, else the head's; None without a readable
/// one (the profile's values were sent then).
pub fn shadow_of(source: &str, label: Option<&str>) -> Option<ShadowMetadata> {
    let head = format!("{source}{}", shadow::SUFFIX);
    if let Some(l) = label {
        let own = format!("{head}.v{l}");
        if std::path::Path::new(&own).is_file() {
            return shadow::load(std::path::Path::new(&own)).ok();
        }
    }
    if !std::path::Path::new(&head).is_file() {
        return None;
    }
    shadow::load(std::path::Path::new(&head)).ok()
}

/// The properties document `e` was sent with: on Alfresco a shadow file's properties as
/// they are named there; elsewhere (and without a shadow file) the profile's, mapped shadow
/// values in place of generated ones.
pub fn expected(expect: &Expect, e: &ManifestEntry, shadow: Option<&ShadowMetadata>) -> Vec<Want> {
    let profile = &expect.profile;
    if let (ProtocolKind::Alfresco, Some(s)) = (expect.protocol, shadow) {
        return s
            .properties
            .iter()
            .map(|(name, values)| {
                let spec = profile.spec_of(name);
                Want {
                    name: name.clone(),
                    ty: spec.map(|p| p.ty),
                    values: if spec.is_some_and(|p| p.multiple) {
                        values.clone()
                    } else {
                        vec![values.join(",")]
                    },
                }
            })
            .collect();
    }
    profile
        .values_with(expect.seed, e.index, &e.marker, shadow)
        .into_iter()
        .map(|p| {
            let values = if expect.protocol == ProtocolKind::Liferay && p.name == "title" {
                p.values
                    .iter()
                    .map(|v| crate::protocol::liferay::unique_title(v, &e.name))
                    .collect()
            } else {
                p.values
            };
            Want {
                name: p.name,
                ty: Some(p.ty),
                values,
            }
        })
        .collect()
}

/// Two values the same by their own shape: equal text, or the same number, instant or
/// boolean (for a property no profile property types).
fn loose_same(a: &str, b: &str) -> bool {
    a == b
        || [
            PropType::Long,
            PropType::Double,
            PropType::DateTime,
            PropType::Boolean,
        ]
        .iter()
        .any(|t| {
            same_value(*t, a, b)
                && (*t != PropType::Boolean || matches!(a.trim(), "true" | "false"))
        })
}

/// The first property whose values differ from what was sent, described; None when all
/// match (properties the server adds are not looked at).
pub fn first_difference(wants: &[Want], got: &BTreeMap<String, Vec<String>>) -> Option<String> {
    for w in wants {
        let have = got.get(&w.name);
        let same = have.is_some_and(|have| {
            have.len() == w.values.len()
                && w.values.iter().zip(have).all(|(a, b)| match w.ty {
                    Some(t) => same_value(t, a, b),
                    None => loose_same(a, b),
                })
        });
        if !same {
            let ty = w.ty.map_or_else(
                || "untyped".to_string(),
                |t| format!("{t:?}").to_lowercase(),
            );
            return Some(format!(
                "{} ({ty}): sent {:?}, found {:?}",
                w.name, w.values, have
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untyped_values_compare_by_shape() {
        assert!(loose_same("2021-01-10", "2021-01-10T00:00:00.000+0000"));
        assert!(loose_same("12.50", "12.5"));
        assert!(loose_same("true", "TRUE"));
        assert!(!loose_same("a", "b"));
        assert!(!loose_same("yes", "no"));
        let got = BTreeMap::from([("x".to_string(), vec!["1".to_string(), "2".to_string()])]);
        let w = |v: &[&str]| Want {
            name: "x".into(),
            ty: Some(PropType::Int),
            values: v.iter().map(|s| s.to_string()).collect(),
        };
        assert!(first_difference(&[w(&["1", "2"])], &got).is_none());
        let d = first_difference(&[w(&["1", "3"])], &got).unwrap();
        assert!(d.starts_with("x (int): sent"), "{d}");
    }
}
