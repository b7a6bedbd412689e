//! Alfresco's data dictionary: the stock types and properties an upload touches, plus any
//! content model XML (the same file a real Alfresco deploys). Validates node types and
//! property values the way the repository does: unknown property → 400, unconvertible
//! value → 400, API-protected property → 400, missing mandatory → 422. The embedded target
//! (`emulator`) serves with it and the pre-flight check (`corpus`) checks shadow metadata
//! against it; no I/O beyond reading a model file it is given.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::timefmt;

pub const ACME_MODEL: &str = include_str!("../../../fixtures/alfresco/acme-model.xml");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataType {
    Text,
    Int,
    Long,
    Float,
    Double,
    Date,
    DateTime,
    Boolean,
    Any,
}

impl DataType {
    fn parse(s: &str) -> Option<DataType> {
        Some(match s {
            "d:text" | "d:mltext" => DataType::Text,
            "d:int" => DataType::Int,
            "d:long" => DataType::Long,
            "d:float" => DataType::Float,
            "d:double" => DataType::Double,
            "d:date" => DataType::Date,
            "d:datetime" => DataType::DateTime,
            "d:boolean" => DataType::Boolean,
            "d:any" | "d:qname" | "d:noderef" | "d:locale" => DataType::Any,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone)]
pub struct PropDef {
    pub ty: DataType,
    pub multiple: bool,
    pub mandatory: bool,
    /// The type or aspect declaring it.
    pub owner: String,
    pub owner_is_aspect: bool,
}

#[derive(Debug, Clone, Default)]
struct ClassDef {
    parent: Option<String>,
    props: Vec<String>,
}

/// Why a property set was refused: HTTP status and Alfresco's message.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub status: u16,
    pub message: String,
}

fn refuse(status: u16, message: String) -> Refusal {
    Refusal { status, message }
}

fn child<'a, 'i>(n: roxmltree::Node<'a, 'i>, name: &str) -> Option<roxmltree::Node<'a, 'i>> {
    n.children().find(|c| c.tag_name().name() == name)
}

fn text(n: roxmltree::Node<'_, '_>, name: &str) -> Option<String> {
    child(n, name)
        .and_then(|c| c.text())
        .map(|t| t.trim().to_string())
}

#[derive(Debug, Clone)]
pub struct Dictionary {
    prefixes: HashSet<String>,
    types: HashMap<String, ClassDef>,
    aspects: HashMap<String, ClassDef>,
    props: HashMap<String, PropDef>,
}

const STOCK_PREFIXES: &[&str] = &[
    "sys", "cm", "app", "d", "usr", "rn", "exif", "audio", "dp", "st", "lnk",
];

impl Dictionary {
    /// Stock types/aspects only.
    pub fn stock() -> Dictionary {
        let mut d = Dictionary {
            prefixes: STOCK_PREFIXES.iter().map(|s| s.to_string()).collect(),
            types: HashMap::new(),
            aspects: HashMap::new(),
            props: HashMap::new(),
        };
        d.types.insert("sys:base".into(), ClassDef::default());
        d.types.insert(
            "cm:cmobject".into(),
            ClassDef {
                parent: Some("sys:base".into()),
                props: vec!["cm:name".into()],
            },
        );
        d.types.insert(
            "cm:content".into(),
            ClassDef {
                parent: Some("cm:cmobject".into()),
                props: vec![],
            },
        );
        d.types.insert(
            "cm:folder".into(),
            ClassDef {
                parent: Some("cm:cmobject".into()),
                props: vec![],
            },
        );
        d.add_prop("cm:name", DataType::Text, false, true, "cm:cmobject", false);
        for (aspect, props) in [
            ("cm:titled", &["cm:title", "cm:description"][..]),
            ("cm:author", &["cm:author"][..]),
            ("cm:versionable", &["cm:versionLabel", "cm:versionType"][..]),
            (
                "cm:auditable",
                &[
                    "cm:created",
                    "cm:creator",
                    "cm:modified",
                    "cm:modifier",
                    "cm:accessed",
                ][..],
            ),
            ("cm:ownable", &["cm:owner"][..]),
        ] {
            d.aspects.insert(
                aspect.into(),
                ClassDef {
                    parent: None,
                    props: props.iter().map(|s| s.to_string()).collect(),
                },
            );
            for p in props {
                let ty = if matches!(*p, "cm:created" | "cm:modified" | "cm:accessed") {
                    DataType::DateTime
                } else {
                    DataType::Text
                };
                d.add_prop(p, ty, false, false, aspect, true);
            }
        }
        d
    }

    fn add_prop(
        &mut self,
        name: &str,
        ty: DataType,
        multiple: bool,
        mandatory: bool,
        owner: &str,
        aspect: bool,
    ) {
        self.props.insert(
            name.into(),
            PropDef {
                ty,
                multiple,
                mandatory,
                owner: owner.into(),
                owner_is_aspect: aspect,
            },
        );
    }

    /// Stock plus the models given (XML text, source name for errors).
    pub fn with_models(models: &[(String, String)]) -> Result<Dictionary> {
        let mut d = Dictionary::stock();
        for (xml, source) in models {
            d.load_model(xml)
                .with_context(|| format!("content model {source}"))?;
        }
        Ok(d)
    }

    pub fn load_file(path: &Path) -> Result<(String, String)> {
        let xml = std::fs::read_to_string(path).with_context(|| {
            format!(
                "--model {}: cannot read the content model file",
                path.display()
            )
        })?;
        Ok((xml, path.display().to_string()))
    }

    fn load_model(&mut self, xml: &str) -> Result<()> {
        let doc = roxmltree::Document::parse(xml).context("not well-formed XML")?;
        let root = doc.root_element();
        if root.tag_name().name() != "model" {
            bail!("the root element must be <model>");
        }
        for ns in root
            .descendants()
            .filter(|n| n.tag_name().name() == "namespace")
        {
            if let Some(p) = ns.attribute("prefix") {
                self.prefixes.insert(p.to_string());
            }
        }
        for (section, is_aspect) in [("types", false), ("aspects", true)] {
            let Some(sec) = child(root, section) else {
                continue;
            };
            for class in sec.children().filter(|c| c.is_element()) {
                let name = class
                    .attribute("name")
                    .context("a type or aspect without a name")?
                    .to_string();
                let mut def = ClassDef {
                    parent: text(class, "parent"),
                    props: vec![],
                };
                if let Some(props) = child(class, "properties") {
                    for p in props
                        .children()
                        .filter(|c| c.tag_name().name() == "property")
                    {
                        let pname = p
                            .attribute("name")
                            .context("a property without a name")?
                            .to_string();
                        let tname = text(p, "type").unwrap_or_default();
                        let ty = DataType::parse(&tname).with_context(|| {
                            format!("property {pname}: unsupported type `{tname}`")
                        })?;
                        let multiple = text(p, "multiple").as_deref() == Some("true");
                        let mandatory = text(p, "mandatory").as_deref() == Some("true");
                        self.add_prop(&pname, ty, multiple, mandatory, &name, is_aspect);
                        def.props.push(pname);
                    }
                }
                if is_aspect {
                    self.aspects.insert(name, def);
                } else {
                    self.types.insert(name, def);
                }
            }
        }
        Ok(())
    }

    /// Is `ty` `ancestor` or one of its subtypes?
    pub fn is_subtype(&self, ty: &str, ancestor: &str) -> bool {
        let mut cur = Some(ty.to_string());
        let mut hops = 0;
        while let Some(t) = cur {
            if t == ancestor {
                return true;
            }
            hops += 1;
            if hops > 32 {
                return false;
            }
            cur = self.types.get(&t).and_then(|c| c.parent.clone());
        }
        false
    }

    pub fn has_type(&self, ty: &str) -> bool {
        self.types.contains_key(ty)
    }

    pub fn has_aspect(&self, aspect: &str) -> bool {
        self.aspects.contains_key(aspect)
    }

    /// Checks the node type for an upload (must be cm:content or a subtype).
    pub fn check_content_type(&self, ty: &str) -> Result<(), Refusal> {
        if !self.has_type(ty) {
            return Err(refuse(400, format!("Unknown type: {ty}")));
        }
        if !self.is_subtype(ty, "cm:content") {
            return Err(refuse(
                400,
                format!("Can only upload type of cm:content: {ty}"),
            ));
        }
        Ok(())
    }

    /// Converts the string values of the properties set on a new node to typed JSON values
    /// and collects the aspects they bring; enforces mandatory properties of `node_type`.
    pub fn convert(
        &self,
        node_type: &str,
        raw: &[(String, Vec<String>)],
    ) -> Result<(serde_json::Map<String, Value>, Vec<String>), Refusal> {
        let (props, aspects) = self.convert_update(raw)?;
        self.check_mandatory(node_type, &props)?;
        Ok((props, aspects))
    }

    /// [`Dictionary::convert`] of an update (`PUT nodes/{id}`): the properties sent,
    /// typed, and the aspects they bring; mandatory ones are already set on the node.
    pub fn convert_update(
        &self,
        raw: &[(String, Vec<String>)],
    ) -> Result<(serde_json::Map<String, Value>, Vec<String>), Refusal> {
        let mut props = serde_json::Map::new();
        let mut aspects: Vec<String> = Vec::new();
        for (name, values) in raw {
            let (prefix, _) = name.split_once(':').unwrap_or(("", name));
            if prefix == "sys"
                || matches!(
                    name.as_str(),
                    "cm:created" | "cm:creator" | "cm:modified" | "cm:modifier" | "cm:accessed"
                )
            {
                return Err(refuse(400, format!("Cannot be used by API: {name}")));
            }
            if !self.prefixes.contains(prefix) {
                return Err(refuse(
                    400,
                    format!("Namespace prefix {prefix} is not mapped to a namespace URI"),
                ));
            }
            let Some(def) = self.props.get(name) else {
                return Err(refuse(400, format!("Unknown property: {name}")));
            };
            if values.len() > 1 && !def.multiple {
                return Err(refuse(
                    400,
                    format!(
                        "Property {name} is single-valued but {} values were sent",
                        values.len()
                    ),
                ));
            }
            let mut typed = Vec::with_capacity(values.len());
            for v in values {
                typed.push(convert_value(def.ty, v).ok_or_else(|| {
                    refuse(
                        400,
                        format!(
                            "Failed to convert value `{v}` of property {name} to {:?}",
                            def.ty
                        ),
                    )
                })?);
            }
            let value = if def.multiple {
                Value::Array(typed)
            } else {
                typed.pop().unwrap_or(Value::Null)
            };
            props.insert(name.clone(), value);
            if def.owner_is_aspect && !aspects.contains(&def.owner) {
                aspects.push(def.owner.clone());
            }
        }
        Ok((props, aspects))
    }

    fn check_mandatory(
        &self,
        node_type: &str,
        props: &serde_json::Map<String, Value>,
    ) -> Result<(), Refusal> {
        // Mandatory properties of the type and its ancestors (checked at commit: 422).
        let mut cur = Some(node_type.to_string());
        while let Some(t) = cur {
            if let Some(c) = self.types.get(&t) {
                for p in &c.props {
                    let def = &self.props[p];
                    if def.mandatory && p != "cm:name" && !props.contains_key(p) {
                        return Err(refuse(
                            422,
                            format!(
                                "Found 1 integrity violations: Mandatory property not set: {p}"
                            ),
                        ));
                    }
                }
                cur = c.parent.clone();
            } else {
                cur = None;
            }
        }
        Ok(())
    }
}

fn convert_value(ty: DataType, v: &str) -> Option<Value> {
    Some(match ty {
        DataType::Text | DataType::Any => Value::String(v.to_string()),
        DataType::Int => Value::from(v.trim().parse::<i32>().ok()?),
        DataType::Long => Value::from(v.trim().parse::<i64>().ok()?),
        DataType::Float | DataType::Double => {
            let f = v.trim().parse::<f64>().ok()?;
            serde_json::Number::from_f64(f).map(Value::Number)?
        }
        DataType::Date | DataType::DateTime => {
            Value::String(timefmt::alfresco_datetime_ms(timefmt::parse_iso(v.trim())?))
        }
        // Alfresco converts with Boolean.valueOf: anything but "true" (any case) is false.
        DataType::Boolean => Value::Bool(v.trim().eq_ignore_ascii_case("true")),
    })
}

/// Node names the repository takes: `cm:filename`'s constraint on `cm:name`
/// ([`super::FACTS`]); it refuses the others with 422.
pub fn valid_name(name: &str) -> bool {
    !super::FACTS.names.refuses(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict() -> Dictionary {
        Dictionary::with_models(&[(ACME_MODEL.to_string(), "acme".into())]).unwrap()
    }

    fn raw(pairs: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn validates_like_alfresco() {
        let d = dict();
        assert!(d.check_content_type("acme:document").is_ok());
        assert_eq!(d.check_content_type("cm:folder").unwrap_err().status, 400);
        assert_eq!(d.check_content_type("acme:nope").unwrap_err().status, 400);
        let ok = d
            .convert(
                "acme:document",
                &raw(&[
                    ("acme:documentId", &["x"]),
                    ("acme:caseNumber", &["12"]),
                    ("acme:keywords", &["a", "b"]),
                    ("cm:title", &["t"]),
                ]),
            )
            .unwrap();
        assert_eq!(ok.0["acme:caseNumber"], Value::from(12));
        assert_eq!(ok.0["acme:keywords"], serde_json::json!(["a", "b"]));
        assert_eq!(ok.1, vec!["cm:titled".to_string()]);
        let e = d
            .convert(
                "acme:document",
                &raw(&[("acme:documentId", &["x"]), ("acme:bogus", &["1"])]),
            )
            .unwrap_err();
        assert_eq!(
            (e.status, e.message.as_str()),
            (400, "Unknown property: acme:bogus")
        );
        assert_eq!(
            d.convert(
                "acme:document",
                &raw(&[
                    ("acme:documentId", &["x"]),
                    ("acme:caseNumber", &["twelve"])
                ])
            )
            .unwrap_err()
            .status,
            400
        );
        assert_eq!(
            d.convert("acme:document", &raw(&[("cm:title", &["x"])]))
                .unwrap_err()
                .status,
            422
        );
        assert_eq!(
            d.convert("cm:content", &raw(&[("cm:created", &["2020-01-01"])]))
                .unwrap_err()
                .status,
            400
        );
        assert_eq!(
            d.convert("cm:content", &raw(&[("zz:x", &["1"])]))
                .unwrap_err()
                .status,
            400
        );
        assert!(
            valid_name("doc-1.pdf") && !valid_name("a:b") && !valid_name("x.") && !valid_name("x ")
        );
    }
}
