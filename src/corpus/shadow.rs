//! Alfresco Bulk Filesystem Import shadow metadata: `<file>.metadata.properties.xml`, a Java
//! properties file in XML (`<properties><entry key="…">value</entry>…</properties>`). Two keys
//! are special: `type` (the content type's qualified name) and `aspects` (comma-separated
//! qualified names); every other key is a property, multi-valued when its value has commas
//! (values are not trimmed, as the import tool does not trim them). Version history files are
//! `<file>.vN` (N a number, possibly `N.M`) with metadata in
//! `<file>.metadata.properties.xml.vN`; they are versions of a document, not documents.

use std::path::Path;

/// The shadow file suffix.
pub const SUFFIX: &str = ".metadata.properties.xml";

/// What a shadow file says about its document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShadowMetadata {
    pub node_type: Option<String>,
    pub aspects: Vec<String>,
    /// Property name and its values, in file order.
    pub properties: Vec<(String, Vec<String>)>,
}

/// Parses a shadow file's text.
pub fn parse(text: &str) -> Result<ShadowMetadata, String> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let doc = roxmltree::Document::parse_with_options(text, opts).map_err(|e| e.to_string())?;
    let root = doc.root_element();
    if root.tag_name().name() != "properties" {
        return Err(format!(
            "the root element is <{}>, not <properties>",
            root.tag_name().name()
        ));
    }
    let mut m = ShadowMetadata::default();
    for e in root.children().filter(|n| n.is_element()) {
        if e.tag_name().name() != "entry" {
            return Err(format!("unexpected element <{}>", e.tag_name().name()));
        }
        let key = e
            .attribute("key")
            .ok_or_else(|| "an <entry> without a key".to_string())?;
        let value = e.text().unwrap_or("");
        match key {
            "type" => m.node_type = Some(value.to_string()),
            "aspects" => {
                m.aspects = value
                    .split(',')
                    .filter(|a| !a.is_empty())
                    .map(str::to_string)
                    .collect()
            }
            k => m.properties.push((
                k.to_string(),
                value.split(',').map(str::to_string).collect(),
            )),
        }
    }
    Ok(m)
}

/// Reads and parses a shadow file.
pub fn load(path: &Path) -> Result<ShadowMetadata, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    parse(&text)
}

/// What a file name is in a bulk-import source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Document,
    /// `<file>.metadata.properties.xml`
    Metadata,
    /// `<file>.vN` or `<file>.metadata.properties.xml.vN`, when `<file>` exists beside it.
    Version,
}

/// The role of `name`; `exists` says whether a sibling of that name exists.
pub fn role(name: &str, exists: impl Fn(&str) -> bool) -> Role {
    if let Some((base, v)) = name.rsplit_once(".v")
        && !v.is_empty()
        && v.split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        let head = base.strip_suffix(SUFFIX).unwrap_or(base);
        if exists(head) {
            return Role::Version;
        }
    }
    if name.ends_with(SUFFIX) && name.len() > SUFFIX.len() {
        return Role::Metadata;
    }
    Role::Document
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_example_parses() {
        let text = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE properties SYSTEM "http://java.sun.com/dtd/properties.dtd">
<properties>
  <entry key="type">cm:content</entry>
  <entry key="aspects">cm:versionable,cm:dublincore</entry>
  <entry key="cm:title">A photo of a flower.</entry>
  <entry key="cm:taggable">a,b</entry>
</properties>"#;
        let m = parse(text).unwrap();
        assert_eq!(m.node_type.as_deref(), Some("cm:content"));
        assert_eq!(m.aspects, vec!["cm:versionable", "cm:dublincore"]);
        assert_eq!(
            m.properties[0],
            ("cm:title".into(), vec!["A photo of a flower.".into()])
        );
        assert_eq!(m.properties[1].1, vec!["a", "b"]);
        assert!(parse("<properties><entry>x</entry></properties>").is_err());
        assert!(parse("<props/>").is_err());
        assert!(parse("not xml").is_err());
    }

    #[test]
    fn roles() {
        let exists = |n: &str| n == "a.pdf";
        assert_eq!(role("a.pdf", exists), Role::Document);
        assert_eq!(
            role("a.pdf.metadata.properties.xml", exists),
            Role::Metadata
        );
        assert_eq!(role("a.pdf.v1", exists), Role::Version);
        assert_eq!(role("a.pdf.v1.2", exists), Role::Version);
        assert_eq!(
            role("a.pdf.metadata.properties.xml.v2", exists),
            Role::Version
        );
        assert_eq!(
            role("b.pdf.v1", exists),
            Role::Document,
            "no head file: a document"
        );
        assert_eq!(role("report.vX", exists), Role::Document);
    }
}
