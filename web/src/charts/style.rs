//! The charts' shared look: size, palette, line dashes and marker shapes,
//! and how numbers are written on them.

use super::svg::El;
use plotters::prelude::*;

pub const WIDTH: u32 = 720;

pub const HEIGHT: u32 = 360;

/// The size on narrow screens, so the text stays readable when the chart
/// fills a phone's width.
pub const NARROW: (u32, u32) = (440, 300);

/// One variant's colour (light theme; the page inverts for dark).
pub fn palette(i: usize) -> RGBColor {
    const COLORS: [RGBColor; 4] = [
        RGBColor(0x2f, 0x6f, 0xde),
        RGBColor(0xd9, 0x62, 0x2b),
        RGBColor(0x2a, 0x9d, 0x5c),
        RGBColor(0x8e, 0x44, 0xad),
    ];
    COLORS[i % COLORS.len()]
}

pub(crate) fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// Each variant's line: solid, dashed, dotted, dash-dot.
pub(crate) fn dashes(i: usize) -> &'static str {
    ["", "8 4", "2 4", "10 3 2 3"][i % 4]
}

/// Each variant's marker, centred on 0,0: a filled circle, then hollow
/// (larger) square, triangle and diamond, so a marker on top of another
/// leaves the one below visible.
pub(super) fn marker_shape(i: usize, color: &str) -> El {
    let hollow = |e: El| {
        e.attr("fill", "#ffffff")
            .attr("fill-opacity", 0)
            .attr("stroke", color)
            .attr("stroke-width", 2)
    };
    match i % 4 {
        0 => El::new("circle")
            .attr("r", 4.5)
            .attr("fill", color)
            .attr("stroke", "#ffffff")
            .attr("stroke-width", 1),
        1 => hollow(
            El::new("rect")
                .attr("x", -6)
                .attr("y", -6)
                .attr("width", 12)
                .attr("height", 12),
        ),
        2 => hollow(El::new("polygon").attr("points", "0,-8 7,5 -7,5")),
        _ => hollow(El::new("polygon").attr("points", "0,-8 8,0 0,8 -8,0")),
    }
}

/// Percent tick labels with as many decimals as the span needs.
pub(super) fn pct_axis(span: f64) -> impl Fn(&f64) -> String {
    let decimals = if span < 3.0 {
        2
    } else if span < 30.0 {
        1
    } else {
        0
    };
    move |y: &f64| {
        let y = if y.abs() < 0.5 * 10f64.powi(-decimals) {
            0.0
        } else {
            *y
        };
        format!("{y:+.decimals$}%", decimals = decimals as usize)
    }
}

/// Axis numbers, short: 4.2M, 880k, 9.32.
pub fn short(v: f64) -> String {
    let a = v.abs();
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if a >= 1e6 {
        format!("{}M", trim(format!("{:.2}", v / 1e6)))
    } else if a >= 1e4 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else if a >= 100.0 || a == 0.0 {
        trim(format!("{v:.0}"))
    } else {
        // Three significant digits: 9.36, 0.0075.
        let decimals = (2 - a.log10().floor() as i32).clamp(0, 9) as usize;
        trim(format!("{v:.decimals$}"))
    }
}

pub(super) fn pct(v: f64) -> String {
    format!("{v:+.2}%")
}

pub(super) fn e<E: std::fmt::Debug>(err: E) -> String {
    format!("{err:?}")
}

/// A data marker: focusable, named by its exact value.
pub(crate) fn marker(
    i: usize,
    variant: &str,
    x: &str,
    value: f64,
    at: (i32, i32),
    text: &str,
) -> El {
    El::new("g")
        .attr("class", "marker")
        .attr("tabindex", 0)
        .attr("role", "img")
        .attr("aria-label", text)
        .attr("data-variant", variant)
        .attr("data-x", x)
        .attr("data-value", value)
        .attr("transform", format!("translate({} {})", at.0, at.1))
        .child(El::new("title").text(text))
        .child(marker_shape(i, &hex(palette(i))))
}
