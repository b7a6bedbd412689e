//! The `document` JSON part of a Liferay upload (title, description, keywords, customFields,
//! documentType.contentFields, viewableBy, externalReferenceCode), written value by value
//! into a worker's reused buffers: no JSON tree and no string per value on the upload path.
//! Where each profile property goes is settled once per connection ([`Fields`]). Owns only
//! the JSON; the request is `liferay.rs`'s. A test holds the output equal to the serde_json
//! tree it replaced.

use crate::fixtures::{Doc, Profile, PropType};

/// Where a profile property goes in the `document` JSON, from its name.
enum Field {
    /// `customField:<name>`: an entry of `customFields`, typed (a list when several values).
    Custom(String),
    /// `contentField:<name>`: an entry of `documentType.contentFields`, values joined by ",".
    Content(String),
    /// `keywords`: the `keywords` array.
    Keywords,
    /// `title`: the first value made unique with the file name (Liferay refuses a second
    /// document with the same title in a folder).
    Title,
    /// Any other name (`description`, ...): a plain Document field with the first value.
    Plain(String),
}

/// The profile's properties sorted into the JSON's places, made once per connection.
pub struct Fields {
    fields: Vec<Field>,
    /// Plain Document fields the profile sets itself (they replace the defaults).
    plain: Vec<String>,
    node_type: String,
}

/// The Document fields ingestbench sets unless the profile sets them.
const DEFAULTS: [&str; 5] = [
    "fileName",
    "title",
    "externalReferenceCode",
    "viewableBy",
    "documentFolderId",
];

impl Fields {
    pub fn new(profile: &Profile) -> Fields {
        let fields: Vec<Field> = profile
            .properties
            .iter()
            .map(|p| match p.name.split_once(':') {
                Some(("customField", n)) => Field::Custom(n.to_string()),
                Some(("contentField", n)) => Field::Content(n.to_string()),
                _ if p.name == "keywords" => Field::Keywords,
                _ if p.name == "title" => Field::Title,
                _ => Field::Plain(p.name.clone()),
            })
            .collect();
        let plain = profile
            .properties
            .iter()
            .filter(|p| !p.name.contains(':') && p.name != "keywords")
            .map(|p| p.name.clone())
            .collect();
        Fields {
            fields,
            plain,
            node_type: profile.node_type.clone(),
        }
    }

    /// Writes the `document` JSON of `doc` into `parts[0]`; `parts[1]` and `parts[2]` collect
    /// the customFields and contentFields entries on the way. All three are cleared first.
    pub fn write(
        &self,
        profile: &Profile,
        doc: &Doc<'_>,
        folder_id: i64,
        parts: &mut [Vec<u8>; 3],
    ) {
        self.write_with(profile, doc, folder_id, None, parts)
    }

    /// [`Fields::write`] with a corpus document's shadow metadata: properties the profile
    /// maps to shadow properties (`shadow = "acme:caseNumber"`) take the shadow's values.
    pub fn write_with(
        &self,
        profile: &Profile,
        doc: &Doc<'_>,
        folder_id: i64,
        shadow: Option<&crate::fixtures::ShadowMetadata>,
        parts: &mut [Vec<u8>; 3],
    ) {
        let [out, custom, content] = parts;
        out.clear();
        custom.clear();
        content.clear();
        out.push(b'{');
        for name in DEFAULTS {
            if self.plain.iter().any(|p| p == name) {
                continue;
            }
            key(out, name);
            match name {
                "externalReferenceCode" => string(out, &[doc.marker_str()]),
                "viewableBy" => string(out, &["Anyone"]),
                "documentFolderId" => {
                    out.extend_from_slice(itoa::Buffer::new().format(folder_id).as_bytes())
                }
                _ => string(out, &[&doc.name]),
            }
        }
        let mut w = Writer {
            out,
            custom,
            content,
            current: usize::MAX,
            count: 0,
            start: 0,
        };
        profile.each_value_with(
            doc.seed,
            doc.index,
            doc.marker_str(),
            shadow,
            |k, spec, v| {
                if k != w.current {
                    w.close(self);
                    w.current = k;
                    w.count = 0;
                }
                w.count += 1;
                w.value(&self.fields[k], spec.ty, v, &doc.name);
            },
        );
        w.close(self);
        if !custom.is_empty() {
            key(out, "customFields");
            out.push(b'[');
            out.extend_from_slice(custom);
            out.push(b']');
        }
        if !content.is_empty() {
            key(out, "documentType");
            out.extend_from_slice(b"{\"name\":");
            string(out, &[&self.node_type]);
            out.extend_from_slice(b",\"contentFields\":[");
            out.extend_from_slice(content);
            out.extend_from_slice(b"]}");
        }
        out.push(b'}');
    }
}

/// The buffers and the property being written.
struct Writer<'a> {
    out: &'a mut Vec<u8>,
    custom: &'a mut Vec<u8>,
    content: &'a mut Vec<u8>,
    /// The property whose values are being written (`usize::MAX`: none yet).
    current: usize,
    /// Its values so far.
    count: usize,
    /// Where its first value starts (a second one makes a custom field's value a list).
    start: usize,
}

impl Writer<'_> {
    fn value(&mut self, field: &Field, ty: PropType, v: &str, file_name: &str) {
        let first = self.count == 1;
        match field {
            Field::Custom(name) if first => {
                entry(self.custom, name, "customValue");
                self.start = self.custom.len();
                typed(self.custom, ty, v);
            }
            Field::Custom(_) => {
                if self.count == 2 {
                    self.custom.insert(self.start, b'[');
                }
                self.custom.push(b',');
                typed(self.custom, ty, v);
            }
            Field::Content(name) if first => {
                entry(self.content, name, "contentFieldValue");
                string(self.content, &[v]);
            }
            Field::Content(_) => {
                // Joined with "," inside the one string: reopen it.
                self.content.pop();
                self.content.push(b',');
                let at = self.content.len();
                string(self.content, &[v]);
                self.content.remove(at);
            }
            Field::Keywords => {
                if first {
                    key(self.out, "keywords");
                    self.out.push(b'[');
                } else {
                    self.out.push(b',');
                }
                string(self.out, &[v]);
            }
            Field::Title if first => {
                key(self.out, "title");
                string(self.out, &unique_title(v, file_name));
            }
            Field::Plain(name) if first => {
                key(self.out, name);
                string(self.out, &[v]);
            }
            Field::Title | Field::Plain(_) => {}
        }
    }

    /// Ends the current property's value.
    fn close(&mut self, fields: &Fields) {
        if self.count == 0 {
            return;
        }
        match &fields.fields[self.current] {
            Field::Custom(_) => {
                if self.count > 1 {
                    self.custom.push(b']');
                }
                self.custom.extend_from_slice(b"}}");
            }
            Field::Content(_) => self.content.extend_from_slice(b"}}"),
            Field::Keywords => self.out.push(b']'),
            Field::Title | Field::Plain(_) => {}
        }
    }
}

/// Opens an entry of a list of fields: `{"name":<name>,"<value>":{"data":` (after a comma
/// unless it is the first); the caller writes the data and closes it with `}}`.
fn entry(out: &mut Vec<u8>, name: &str, value: &str) {
    if !out.is_empty() {
        out.push(b',');
    }
    out.extend_from_slice(b"{\"name\":");
    string(out, &[name]);
    out.push(b',');
    string(out, &[value]);
    out.extend_from_slice(b":{\"data\":");
}

/// Liferay refuses a second document with the same title in a folder: a document's title is
/// the profile's title plus its (unique) file name, `<title> (<file name>)`, as pieces to be
/// written without joining them (`liferay::unique_title` joins them for `verify`).
pub fn unique_title<'a>(title: &'a str, file_name: &'a str) -> [&'a str; 4] {
    [title, " (", file_name, ")"]
}

/// `,"name":` (no comma right after the opening brace).
fn key(out: &mut Vec<u8>, name: &str) {
    if out.last() != Some(&b'{') {
        out.push(b',');
    }
    string(out, &[name]);
    out.push(b':');
}

/// The JSON string of the concatenation of `parts`, escaped as serde_json escapes.
fn string(out: &mut Vec<u8>, parts: &[&str]) {
    out.push(b'"');
    for p in parts {
        if plain(p.as_bytes()) {
            out.extend_from_slice(p.as_bytes());
        } else {
            let at = out.len();
            serde_json::to_writer(&mut *out, p).expect("serialize to memory");
            out.remove(at);
            out.pop();
        }
    }
    out.push(b'"');
}

/// Whether `s` needs no escaping in a JSON string (no control character, quote or backslash).
/// Every byte is tested, with no early exit, so that the compiler checks 16 bytes at a time
/// (an early exit makes it a loop of one byte and three branches): values are short and
/// almost never need escaping, and testing them is the largest share of writing a
/// document's JSON (`benches/hot_paths.rs`).
fn plain(s: &[u8]) -> bool {
    s.iter()
        .fold(true, |ok, &b| ok & (b >= 0x20) & (b != b'"') & (b != b'\\'))
}

/// A custom field's value as JSON of its type (custom fields are typed expando columns); a
/// value that does not parse as its type is sent as a string.
fn typed(out: &mut Vec<u8>, ty: PropType, v: &str) {
    match ty {
        PropType::Int | PropType::Long => match v.parse::<i64>() {
            Ok(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
            Err(_) => string(out, &[v]),
        },
        PropType::Float | PropType::Double => match v.parse::<f64>() {
            Ok(f) if f.is_finite() => serde_json::to_writer(&mut *out, &f).expect("to memory"),
            _ => string(out, &[v]),
        },
        PropType::Boolean => out.extend_from_slice(if v == "true" { b"true" } else { b"false" }),
        _ => string(out, &[v]),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Value, json};

    use super::*;
    use crate::fixtures::{Fixtures, PropValue, SizeClass};

    /// The tree this module replaced: the reference its output is held to.
    fn tree(profile: &Profile, doc: &Doc<'_>, folder_id: i64) -> Value {
        let mut d = serde_json::Map::new();
        d.insert("fileName".into(), json!(doc.name));
        d.insert("title".into(), json!(doc.name));
        d.insert("externalReferenceCode".into(), json!(doc.marker_str()));
        d.insert("viewableBy".into(), json!("Anyone"));
        d.insert("documentFolderId".into(), json!(folder_id));
        let mut custom = Vec::new();
        let mut content = Vec::new();
        for p in profile.values(doc.seed, doc.index, doc.marker_str()) {
            match p.name.split_once(':') {
                Some(("customField", name)) => {
                    custom.push(json!({"name": name, "customValue": {"data": typed_tree(&p)}}))
                }
                Some(("contentField", name)) => content
                    .push(json!({"name": name, "contentFieldValue": {"data": p.values.join(",")}})),
                _ if p.name == "keywords" => {
                    d.insert("keywords".into(), json!(p.values));
                }
                _ => {
                    let v = p.values.first().cloned().unwrap_or_default();
                    let v = if p.name == "title" {
                        format!("{v} ({})", doc.name)
                    } else {
                        v
                    };
                    d.insert(p.name.clone(), json!(v));
                }
            }
        }
        if !custom.is_empty() {
            d.insert("customFields".into(), Value::Array(custom));
        }
        if !content.is_empty() {
            d.insert(
                "documentType".into(),
                json!({"name": profile.node_type, "contentFields": content}),
            );
        }
        Value::Object(d)
    }

    fn typed_tree(p: &PropValue) -> Value {
        let one = |s: &String| match p.ty {
            PropType::Int | PropType::Long => s
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or_else(|_| json!(s)),
            PropType::Float | PropType::Double => s
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .unwrap_or_else(|| json!(s)),
            PropType::Boolean => Value::Bool(s == "true"),
            _ => json!(s),
        };
        if p.values.len() == 1 {
            one(&p.values[0])
        } else {
            Value::Array(p.values.iter().map(one).collect())
        }
    }

    /// Keys of the top-level object as written, duplicates included (a `Value` keeps one).
    fn top_level_keys(json: &[u8]) -> usize {
        struct Count(usize);
        impl<'de> serde::Deserialize<'de> for Count {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Count, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = Count;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("an object")
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut m: A,
                    ) -> Result<Count, A::Error> {
                        let mut n = 0;
                        while m.next_entry::<String, serde::de::IgnoredAny>()?.is_some() {
                            n += 1;
                        }
                        Ok(Count(n))
                    }
                }
                d.deserialize_map(V)
            }
        }
        serde_json::from_slice::<Count>(json).unwrap().0
    }

    const TRICKY: &str = r#"
name = "tricky"
protocol = "liferay"
description = "every place, several values, characters JSON escapes"
node_type = "Doc \"Type\""

property = [
  { name = "description", type = "d:text", values = ["a \"quoted\"\\ line\nand\ttab"] },
  { name = "customField:tags", type = "d:text", multiple = true, values = ["x", "y\"", "z"] },
  { name = "customField:counts", type = "d:int", multiple = true, min = 1, max = 9 },
  { name = "contentField:parts", type = "d:text", multiple = true, values = ["p,1", "p\\2", "p3"] },
  { name = "keywords", type = "d:text", multiple = true, values = ["k1", "k\"2"] },
  { name = "title", type = "d:text", multiple = true, values = ["T\"1", "T2"] },
  { name = "customField:ratio", type = "d:double", min = 0, max = 1 },
]
"#;

    #[test]
    fn the_json_is_the_tree_it_replaced() {
        let dir = std::env::temp_dir().join(format!("ib-lrjson-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let tricky = dir.join("tricky.toml");
        std::fs::write(&tricky, TRICKY).unwrap();
        let mut parts = [Vec::new(), Vec::new(), Vec::new()];
        for spec in ["liferay", "basic", "acme", tricky.to_str().unwrap()] {
            let profile = Arc::new(Profile::load(spec).unwrap());
            let fields = Fields::new(&profile);
            let fx = Fixtures::new(SizeClass::Small, 2048, 7, profile.clone());
            for i in 0..60 {
                let doc = fx.doc(3, i);
                fields.write(&profile, &doc, 40 + i as i64, &mut parts);
                assert_eq!(
                    top_level_keys(&parts[0]),
                    serde_json::from_slice::<Value>(&parts[0])
                        .unwrap()
                        .as_object()
                        .unwrap()
                        .len(),
                    "{spec} #{i}: a key written twice"
                );
                let got: Value = serde_json::from_slice(&parts[0]).unwrap_or_else(|e| {
                    panic!("{spec} #{i}: {e}: {}", String::from_utf8_lossy(&parts[0]))
                });
                assert_eq!(got, tree(&profile, &doc, 40 + i as i64), "{spec} #{i}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The bytes themselves, not only the tree they parse to: a document of the built-in
    /// Liferay profile and one of [`TRICKY`] (every escape), held to fixed strings.
    #[test]
    fn the_json_bytes_are_fixed() {
        let dir = std::env::temp_dir().join(format!("ib-lrbytes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let tricky = dir.join("tricky.toml");
        std::fs::write(&tricky, TRICKY).unwrap();
        let mut parts = [Vec::new(), Vec::new(), Vec::new()];
        for (spec, i, want) in [
            ("liferay", 1, LIFERAY_DOC_1),
            (tricky.to_str().unwrap(), 0, TRICKY_DOC_0),
        ] {
            let profile = Arc::new(Profile::load(spec).unwrap());
            let fx = Fixtures::new(SizeClass::Small, 2048, 7, profile.clone());
            Fields::new(&profile).write(&profile, &fx.doc(3, i), 42, &mut parts);
            assert_eq!(String::from_utf8_lossy(&parts[0]), want, "{spec} #{i}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    const LIFERAY_DOC_1: &str = r#"{"fileName":"doc-00000001.xml","externalReferenceCode":"0000000000000003-000000000001","viewableBy":"Anyone","documentFolderId":42,"title":"Benchmark document 1 (doc-00000001.xml)","description":"ledger import archive ledger","keywords":["archive"],"customFields":[{"name":"documentId","customValue":{"data":"0000000000000003-000000000001"}},{"name":"caseNumber","customValue":{"data":688236}},{"name":"amount","customValue":{"data":15918.7}},{"name":"confidential","customValue":{"data":false}},{"name":"receivedAt","customValue":{"data":"2015-02-09T10:02:16.000Z"}}],"documentType":{"name":"IngestBench Document","contentFields":[{"name":"department","contentFieldValue":{"data":"finance"}},{"name":"accountNumber","contentFieldValue":{"data":"1078274503700"}},{"name":"documentDate","contentFieldValue":{"data":"2011-11-11"}},{"name":"ratio","contentFieldValue":{"data":"0.56"}},{"name":"region","contentFieldValue":{"data":"east"}}]}}"#;

    const TRICKY_DOC_0: &str = r#"{"fileName":"doc-00000000.pdf","externalReferenceCode":"0000000000000003-000000000000","viewableBy":"Anyone","documentFolderId":42,"description":"a \"quoted\"\\ line\nand\ttab","keywords":["k\"2"],"title":"T2 (doc-00000000.pdf)","customFields":[{"name":"tags","customValue":{"data":"x"}},{"name":"counts","customValue":{"data":[1,2,2]}},{"name":"ratio","customValue":{"data":0.2}}],"documentType":{"name":"Doc \"Type\"","contentFields":[{"name":"parts","contentFieldValue":{"data":"p\\2,p,1"}}]}}"#;
}
