//! A small typed SVG builder. The charts were once made by splicing text
//! into plotters' output; here each is a tree of elements whose attribute
//! values and text are escaped in one place, when written.

use std::fmt::Write;

/// Text for SVG attributes and elements.
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// What an element holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    El(El),
    /// Text, escaped when written.
    Text(String),
    /// plotters' finished `<svg>` document, written verbatim: trusted
    /// library output (the chart's frame), never user text.
    Frame(String),
}

/// An element: its name, attributes in order, and children.
#[derive(Debug, Clone, PartialEq)]
pub struct El {
    name: &'static str,
    attrs: Vec<(&'static str, String)>,
    children: Vec<Node>,
}

impl El {
    pub fn new(name: &'static str) -> El {
        El {
            name,
            attrs: Vec::new(),
            children: Vec::new(),
        }
    }

    /// Adds an attribute; numbers are written as `Display` writes them.
    pub fn attr(mut self, name: &'static str, value: impl ToString) -> El {
        self.attrs.push((name, value.to_string()));
        self
    }

    pub fn child(mut self, node: impl Into<Node>) -> El {
        self.children.push(node.into());
        self
    }

    pub fn children<N: Into<Node>>(mut self, nodes: impl IntoIterator<Item = N>) -> El {
        self.children.extend(nodes.into_iter().map(Into::into));
        self
    }

    pub fn text(self, text: impl Into<String>) -> El {
        self.child(Node::Text(text.into()))
    }

    /// Writes the element as SVG: `<name a="v"/>` when it has no children.
    pub fn write(&self, out: &mut String) {
        let _ = write!(out, "<{}", self.name);
        for (name, value) in &self.attrs {
            let _ = write!(out, " {name}=\"{}\"", esc(value));
        }
        if self.children.is_empty() {
            out.push_str("/>");
            return;
        }
        out.push('>');
        for c in &self.children {
            match c {
                Node::El(e) => e.write(out),
                Node::Text(t) => out.push_str(&esc(t)),
                Node::Frame(svg) => out.push_str(svg),
            }
        }
        let _ = write!(out, "</{}>", self.name);
    }
}

impl From<El> for Node {
    fn from(e: El) -> Node {
        Node::El(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(e: &El) -> String {
        let mut s = String::new();
        e.write(&mut s);
        s
    }

    #[test]
    fn attributes_and_text_are_escaped() {
        assert_eq!(esc("<b>&\"x\""), "&lt;b&gt;&amp;&quot;x&quot;");
        let e = El::new("text")
            .attr("aria-label", "<b>&\"x\"")
            .attr("x", 1.5)
            .text("a < b & c");
        assert_eq!(
            written(&e),
            "<text aria-label=\"&lt;b&gt;&amp;&quot;x&quot;\" x=\"1.5\">a &lt; b &amp; c</text>"
        );
    }

    #[test]
    fn elements_nest_in_order_and_the_frame_is_verbatim() {
        let e = El::new("svg")
            .attr("width", 10)
            .child(Node::Frame("<svg><text>&amp;</text></svg>\n".into()))
            .child(El::new("g").child(El::new("path").attr("d", "M0,0H1")))
            .children([El::new("circle"), El::new("rect")])
            .child(El::new("text").text(""));
        assert_eq!(
            written(&e),
            "<svg width=\"10\"><svg><text>&amp;</text></svg>\n\
             <g><path d=\"M0,0H1\"/></g><circle/><rect/><text></text></svg>"
        );
    }
}
