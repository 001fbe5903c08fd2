//! The file as a tree whose every key knows its line.
//!
//! YAML goes through saphyr's `MarkedYaml`, which keeps a span for every
//! node, keys included, and keeps tags such as
//! `!<org.redisson.config.EqualJitterDelay>` (Jackson's and SnakeYAML's
//! class tags) instead of refusing them. JSON is checked with serde_json
//! first, for its error messages, then read by the same YAML loader
//! (JSON is YAML 1.2 flow syntax), so its keys get lines too.

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, ScanError, YamlData};
use saphyr_parser::{Event, Parser};

use super::ConfigError;

/// A value with the line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Node {
    pub line: usize,
    pub value: Value,
}

/// A YAML or JSON value; maps keep the file's order.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
    /// A class tag and the tagged value; JSON's `{"class": ...}` too.
    Tagged(String, Box<Node>),
}

/// One key of a map.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Entry {
    pub key: String,
    pub line: usize,
    pub value: Node,
}

impl Value {
    /// What the value is, for error messages.
    pub fn describe(&self) -> String {
        match self {
            Value::Null => "nothing (null)".to_owned(),
            Value::Bool(b) => format!("the boolean {b}"),
            Value::Int(i) => format!("the number {i}"),
            Value::Float(x) => format!("the number {x}"),
            Value::Str(s) => format!("the string \"{s}\""),
            Value::Seq(_) => "a list".to_owned(),
            Value::Map(_) => "a mapping".to_owned(),
            Value::Tagged(class, _) => format!("an object of class {class}"),
        }
    }

    /// The value as JSON, for the report (Redisson's JSON form:
    /// a class tag becomes a `class` key).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(x) => J::from(*x),
            Value::Str(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(|n| n.value.to_json()).collect()),
            Value::Map(entries) => J::Object(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), e.value.value.to_json()))
                    .collect(),
            ),
            Value::Tagged(class, inner) => {
                let mut object = serde_json::Map::new();
                object.insert("class".to_owned(), J::String(class.clone()));
                if let J::Object(fields) = inner.value.to_json() {
                    object.extend(fields);
                }
                J::Object(object)
            }
        }
    }
}

/// The deepest nesting read. A Redisson config nests three or four
/// levels; `- - - - …` nests a level every two bytes, and saphyr's tree
/// (and its drop) recurse once per level, so a hostile file could
/// overflow the stack before this check.
pub(super) const MAX_DEPTH: usize = 64;

/// Reads YAML text.
pub(super) fn from_yaml(text: &str) -> Result<Node, ConfigError> {
    check_depth(text)?;
    let docs = MarkedYaml::load_from_str(text).map_err(yaml_error)?;
    match docs.first() {
        Some(doc) => Ok(convert(doc)),
        None => Ok(Node {
            line: 1,
            value: Value::Null,
        }),
    }
}

fn yaml_error(e: ScanError) -> ConfigError {
    ConfigError::Yaml {
        line: e.marker().line(),
        column: e.marker().col() + 1,
        message: e.info().to_owned(),
    }
}

/// Refuses nesting deeper than [`MAX_DEPTH`], streaming the parser's
/// events (no tree, no recursion).
fn check_depth(text: &str) -> Result<(), ConfigError> {
    let mut depth = 0usize;
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(yaml_error)?;
        match event {
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(ConfigError::TooDeep {
                        line: span.start.line(),
                        max: MAX_DEPTH,
                    });
                }
            }
            Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Reads JSON text.
pub(super) fn from_json(text: &str) -> Result<Node, ConfigError> {
    if let Err(e) = serde_json::from_str::<serde_json::Value>(text) {
        return Err(ConfigError::Json {
            line: e.line(),
            column: e.column(),
            message: json_message(&e),
        });
    }
    let node = from_yaml(text)?;
    Ok(untag_json(node))
}

/// serde_json's message without its own " at line L column C" tail.
fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// Jackson writes a class as a `"class"` key of the object (3.x's
/// `@JsonTypeInfo(use = CLASS, property = "class")`): the same as a tag.
fn untag_json(node: Node) -> Node {
    let value = match node.value {
        Value::Map(entries) => {
            let mut entries: Vec<Entry> = entries
                .into_iter()
                .map(|e| Entry {
                    value: untag_json(e.value),
                    ..e
                })
                .collect();
            let class = entries.iter().position(|e| e.key == "class");
            match class.map(|i| entries.remove(i)) {
                Some(Entry {
                    value:
                        Node {
                            value: Value::Str(class),
                            ..
                        },
                    ..
                }) => Value::Tagged(
                    class,
                    Box::new(Node {
                        line: node.line,
                        value: Value::Map(entries),
                    }),
                ),
                Some(other) => {
                    entries.insert(0, other);
                    Value::Map(entries)
                }
                None => Value::Map(entries),
            }
        }
        Value::Seq(items) => Value::Seq(items.into_iter().map(untag_json).collect()),
        other => other,
    };
    Node {
        line: node.line,
        value,
    }
}

fn convert(node: &MarkedYaml<'_>) -> Node {
    let line = node.span.start.line();
    let value = match &node.data {
        YamlData::Value(scalar) => scalar_value(scalar),
        YamlData::Representation(text, _, _) => Value::Str(text.to_string()),
        YamlData::Sequence(items) => Value::Seq(items.iter().map(convert).collect()),
        YamlData::Mapping(map) => Value::Map(
            map.iter()
                .map(|(k, v)| Entry {
                    key: key_text(k),
                    line: k.span.start.line(),
                    value: convert(v),
                })
                .collect(),
        ),
        YamlData::Tagged(tag, inner) => {
            let class = format!("{}{}", tag.handle, tag.suffix);
            let class = class.trim_start_matches('!').to_owned();
            Value::Tagged(class, Box::new(convert(inner)))
        }
        // The loader resolves aliases; what is left has no value.
        YamlData::Alias(_) | YamlData::BadValue => Value::Null,
    };
    Node { line, value }
}

fn scalar_value(scalar: &Scalar<'_>) -> Value {
    match scalar {
        Scalar::Null => Value::Null,
        Scalar::Boolean(b) => Value::Bool(*b),
        Scalar::Integer(i) => Value::Int(*i),
        Scalar::FloatingPoint(x) => Value::Float(x.into_inner()),
        Scalar::String(s) => Value::Str(s.to_string()),
    }
}

/// A key as text (Redisson's keys are plain names).
fn key_text(key: &MarkedYaml<'_>) -> String {
    match convert(key).value {
        Value::Str(s) => s,
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Float(x) => x.to_string(),
        Value::Null => "~".to_owned(),
        other => other.describe(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_keys_and_class_tags_keep_their_lines() {
        let text = "a: 1\nb:\n  retryDelay: !<org.redisson.config.EqualJitterDelay> {baseDelay: PT1S, maxDelay: PT2S}\n";
        let Value::Map(top) = from_yaml(text).unwrap().value else {
            panic!()
        };
        assert_eq!((top[1].key.as_str(), top[1].line), ("b", 2));
        let Value::Map(inner) = &top[1].value.value else {
            panic!()
        };
        assert_eq!(inner[0].line, 3);
        let Value::Tagged(class, _) = &inner[0].value.value else {
            panic!("{:?}", inner[0].value)
        };
        assert_eq!(class, "org.redisson.config.EqualJitterDelay");
    }

    #[test]
    fn json_class_keys_are_tags_and_keys_have_lines() {
        let text =
            "{\n  \"codec\": {\"class\": \"org.redisson.codec.Kryo5Codec\"},\n  \"threads\": 16\n}";
        let Value::Map(top) = from_json(text).unwrap().value else {
            panic!()
        };
        assert_eq!((top[1].key.as_str(), top[1].line), ("threads", 3));
        assert!(
            matches!(&top[0].value.value, Value::Tagged(c, _) if c == "org.redisson.codec.Kryo5Codec")
        );
    }
}
