//! The picture of a run: breaker state, utilization, fallback and shed share over virtual time,
//! one panel per run, as an SVG file (people would rather look than read).

use std::io;
use std::path::Path;

use plotters::prelude::*;

use super::Report;

/// One panel of a timeline: a label and the run it shows (see [`timeline`]).
///
/// ```
/// # use std::time::Duration;
/// use fusebox_sim::{svg::Panel, Route, Server};
/// let report = Server::new(1).route(Route::new("a", 1.0)).run_for(Duration::from_secs(1)).unwrap();
/// let panel = Panel { label: "one request a second", report: &report };
/// # let _ = panel;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Panel<'a> {
    /// Caption above the panel.
    pub label: &'a str,
    /// The run.
    pub report: &'a Report,
}

/// Writes `panels` stacked into one SVG file at `path` (parent folders are created).
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::{svg, Route, Server};
/// let report = Server::new(10)
///     .route(Route::new("work", 50.0).work(Duration::from_millis(100)))
///     .run_for(Duration::from_secs(30))
///     .unwrap();
/// let path = std::env::temp_dir().join("fusebox-svg-doc").join("timeline.svg");
/// svg::timeline(&path, "50 req/s × 100 ms on 10 workers", &[svg::Panel { label: "steady", report: &report }])
///     .unwrap();
/// assert!(std::fs::read_to_string(&path).unwrap().starts_with("<svg"));
/// ```
pub fn timeline(path: &Path, title: &str, panels: &[Panel<'_>]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let height = 60 + 300 * panels.len().max(1) as u32;
    let root = SVGBackend::new(path, (1100, height)).into_drawing_area();
    root.fill(&WHITE).map_err(other)?;
    let root = root.titled(title, ("sans-serif", 22)).map_err(other)?;
    let areas = root.split_evenly((panels.len().max(1), 1));
    for (area, panel) in areas.iter().zip(panels) {
        draw_panel(area, panel)?;
    }
    root.present().map_err(other)
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    p: &Panel<'_>,
) -> io::Result<()>
where
    DB::ErrorType: 'static,
{
    let r = p.report;
    let (unit, div) = unit_of(r.duration.as_secs_f64());
    let x_max = (r.duration.as_secs_f64() / div).max(1e-9);
    let mut chart = ChartBuilder::on(area)
        .caption(p.label, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(48)
        .build_cartesian_2d(0f64..x_max, 0f64..105f64)
        .map_err(other)?;
    chart
        .configure_mesh()
        .x_desc(format!("virtual time ({unit})"))
        .y_desc("% ")
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(other)?;
    let step = r.series.step.as_secs_f64() / div;
    // The breakers' state as a grey band behind the lines: it explains them.
    let band = RGBColor(200, 200, 200);
    let open = r
        .series
        .not_closed
        .iter()
        .enumerate()
        .map(|(i, v)| ((i as f64 + 0.5) * step, v * 100.0));
    chart
        .draw_series(AreaSeries::new(open, 0.0, band.mix(0.5)).border_style(band))
        .map_err(other)?
        .label("breaker not closed")
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 18, y + 5)], band.filled()));
    let mut last_label = f64::NEG_INFINITY;
    for w in &r.windows {
        let x = w.from.as_secs_f64() / div;
        chart
            .draw_series(LineSeries::new(
                vec![(x, 0.0), (x, 105.0)],
                BLACK.mix(0.25).stroke_width(1),
            ))
            .map_err(other)?;
        // Labels of windows closer than a tenth of the axis would overlap: keep the first.
        if x - last_label < x_max / 10.0 {
            continue;
        }
        last_label = x;
        chart
            .draw_series(std::iter::once(Text::new(
                w.name.clone(),
                (x, 103.0),
                ("sans-serif", 11).into_font().color(&BLACK.mix(0.6)),
            )))
            .map_err(other)?;
    }
    let lines: [(&str, &Vec<f64>, RGBColor); 3] = [
        (
            "workers busy",
            &r.series.utilization,
            RGBColor(31, 119, 180),
        ),
        (
            "answered by fallback",
            &r.series.fallback,
            RGBColor(255, 127, 14),
        ),
        (
            "shed: no free worker",
            &r.series.shed,
            RGBColor(214, 39, 40),
        ),
    ];
    for (label, values, color) in lines {
        let pts = values
            .iter()
            .enumerate()
            .map(move |(i, v)| ((i as f64 + 0.5) * step, v * 100.0));
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(other)?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .draw()
        .map_err(other)
}

/// A readable unit for a run of `secs` seconds: seconds, minutes or hours.
fn unit_of(secs: f64) -> (&'static str, f64) {
    if secs <= 600.0 {
        ("s", 1.0)
    } else if secs <= 3.0 * 3600.0 {
        ("min", 60.0)
    } else {
        ("h", 3600.0)
    }
}

fn other<E: std::fmt::Display>(e: E) -> io::Error {
    io::Error::other(e.to_string())
}
