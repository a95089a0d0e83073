//! A server page's Conformance section (issue 33): its labels' HTTP/1.1
//! conformance in the latest run that probed them, each failed case with
//! its RFC section and what came back. A view of the runs' reports.

use std::fmt::Write as _;

use crate::html_parts::esc;

use super::{run_path, ServerEntry, Site};

pub(crate) fn conformance_html(b: &mut String, site: &Site, server: &ServerEntry) {
    b.push_str("<section id=\"conformance\"><h2>Conformance</h2>");
    let mut any = false;
    for label in &server.labels {
        // The latest run that probed this label (runs are oldest first).
        let found = site.runs.iter().rev().find_map(|r| {
            r.conformance
                .iter()
                .find(|c| c.server == *label)
                .map(|c| (r.run.id, c))
        });
        let Some((run, row)) = found else { continue };
        any = true;
        let _ = write!(
            b,
            "<p><strong>{}</strong>: {} of {} HTTP/1.1 cases passed in <a href=\"../{}\">run #{}</a>.</p>",
            esc(label),
            row.passed,
            row.total,
            run_path(run),
            run
        );
        if row.failed.is_empty() {
            continue;
        }
        b.push_str(
            "<table class=\"grid\"><thead><tr><th>case</th><th>from</th><th>asks</th>\
             <th>what came back</th></tr></thead><tbody>",
        );
        for f in &row.failed {
            let _ = write!(
                b,
                "<tr><td class=\"text\"><code>{}</code></td><td class=\"text\">{}</td>\
                 <td class=\"text\">{}</td><td class=\"text\">{}</td></tr>",
                esc(&f.id),
                esc(&f.rfc),
                esc(&f.title),
                esc(&f.reason)
            );
        }
        b.push_str("</tbody></table>");
    }
    if !any {
        b.push_str(
            "<p class=\"legend\">No run probed it (runs before issue 33 did not run the \
             conformance probes).</p>",
        );
    }
    b.push_str("</section>");
}
